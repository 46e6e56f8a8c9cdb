import { HttpError } from './errors.js';
import type { Handler } from './router.js';

export const notImplemented: Handler = ({ op }) => {
  throw new HttpError(501, `${op.operationId} is not implemented yet`);
};

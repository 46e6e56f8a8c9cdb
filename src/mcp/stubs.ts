import type { Handler } from '../http/router.js';
import type { ToolName } from '../../generated/tools.js';

/**
 * Every /api/v1/mcp/tools/{tool} path: a discovery stub that answers 405 to any method and any
 * caller. Allow is empty because the stub serves no method; tools run through POST /api/v1/mcp.
 */
export const toolStub: Handler<`mcp.tool.${ToolName}`> = ({ op }) => ({
  status: 405,
  headers: { Allow: '' },
  body: {
    error: 'Method Not Allowed',
    statusCode: 405,
    message: `${op.tool} is a discovery stub; call it with a JSON-RPC tools/call request to POST /api/v1/mcp`,
  },
});

/**
 * Checks every response the server sends against the specs: the status is declared for the
 * operation, the content type is one it declares, a JSON body (or each JSON-RPC message of an SSE
 * stream) validates, and required headers are present. It taps the raw response, so it also sees
 * what the MCP transport writes directly. The test suite installs it on every server it starts;
 * `pactum serve` does with PACTUM_CHECK_RESPONSES=true.
 */
import type { Middleware } from 'koa';
import { validator, type OperationSpec, type ValidateFunction } from '../../generated/operations.js';
import { apiOfPath } from './errors.js';
import { describeErrors } from './router.js';

export interface Violation {
  method: string;
  path: string;
  status: number;
  operationId: string | null;
  problem: string;
}

const CAPTURE_LIMIT = 16 * 1024 * 1024;
const mediaType = (h: string | undefined) => (h ?? '').split(';')[0]!.trim().toLowerCase();

/** Responses the router itself sends for paths or methods no operation serves. */
const unroutedValidators: Record<string, ValidateFunction> = {
  dashboard: validator('dashboard', 'schema_http_error'),
  batch: validator('legacy', 'schema_lfs_error'),
};

export function checkResponse(
  op: OperationSpec | undefined,
  path: string,
  status: number,
  headers: Record<string, string | string[] | number | undefined>,
  body: Buffer | null,
): string[] {
  const problems: string[] = [];
  const type = mediaType(headers['content-type'] as string | undefined);
  const hasBody = body !== null && body.length > 0;
  const parseJson = (): unknown => {
    try {
      return JSON.parse(body!.toString('utf8'));
    } catch {
      problems.push(`body is typed ${type} but is not JSON`);
      return undefined;
    }
  };

  if (!op) {
    // The router's one answer outside the specs: /docs/ → 308 ../docs (see http/router.ts).
    if (status === 308 && path.endsWith('/') && String(headers.location ?? '').startsWith('../')) return hasBody ? ['a trailing-slash redirect carries a body'] : problems;
    if (status !== 404 && status !== 405) problems.push(`status ${status} for a path no operation serves`);
    const validate = unroutedValidators[apiOfPath(path)]!;
    const value = hasBody ? parseJson() : undefined;
    if (value !== undefined && !validate(value)) problems.push(`error body: ${describeErrors(validate.errors, 'body')}`);
    return problems;
  }

  const declared = op.responses[String(status)];
  if (!declared) return [`status ${status} is not declared for ${op.operationId} (declared: ${Object.keys(op.responses).join(', ')})`];
  for (const h of declared.headers) if (h.required && headers[h.name] === undefined) problems.push(`required header ${h.name} is missing`);
  if (!hasBody) return problems;
  if (!declared.mediaTypes.length) return [...problems, `status ${status} of ${op.operationId} declares no body, but one was sent`];
  if (!declared.mediaTypes.includes(type)) problems.push(`content type ${type || '(none)'} is not declared (declared: ${declared.mediaTypes.join(', ')})`);
  if (type === 'text/event-stream') {
    const validate = op.responses['200']?.validate;
    for (const event of body.toString('utf8').split(/\n\n/)) {
      const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (!data) continue;
      let message: { id?: unknown; result?: unknown; error?: unknown };
      try {
        message = JSON.parse(data) as typeof message;
      } catch {
        problems.push('an SSE event carries data that is not JSON');
        continue;
      }
      // Notifications (progress) are not responses; responses must match the 200 JSON schema.
      if (validate && message.id !== undefined && (message.result !== undefined || message.error !== undefined) && !validate(message)) {
        problems.push(`SSE message: ${describeErrors(validate.errors, 'message')}`);
      }
    }
  } else if (/json/.test(type) && declared.validate) {
    const value = parseJson();
    if (value !== undefined && !declared.validate(value)) problems.push(describeErrors(declared.validate.errors, 'body'));
  }
  return problems;
}

export function responseChecker(onViolation: (v: Violation) => void, onBody?: (path: string, body: string) => void): Middleware {
  return async function checkResponses(ctx, next) {
    const res = ctx.res;
    const chunks: Buffer[] = [];
    let size = 0;
    let capture = true;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (!capture || chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      // Only JSON and SSE bodies are checked; object content is not kept in memory.
      const type = mediaType(res.getHeader('content-type') as string | undefined);
      if (!/json|event-stream/.test(type) || size + buf.length > CAPTURE_LIMIT) {
        capture = false;
        chunks.length = 0;
        return;
      }
      size += buf.length;
      chunks.push(buf);
    };
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    const end = res.end.bind(res) as (...a: unknown[]) => typeof res;
    res.write = ((...a: unknown[]) => (keep(a[0], a[1]), write(...a))) as typeof res.write;
    res.end = ((...a: unknown[]) => (keep(a[0], a[1]), end(...a))) as typeof res.end;
    res.once('finish', () => {
      const op = ctx.state.operation as OperationSpec | undefined;
      const body = capture ? Buffer.concat(chunks) : null;
      if (body && onBody) onBody(ctx.path, body.toString('utf8'));
      const lengthSaysBody = Number(res.getHeader('content-length') ?? 0) > 0;
      const problems = checkResponse(
        op,
        ctx.path,
        res.statusCode,
        res.getHeaders(),
        ctx.method === 'HEAD' ? null : body && body.length ? body : lengthSaysBody ? Buffer.from(' ') : null,
      );
      for (const problem of problems) {
        onViolation({ method: ctx.method, path: ctx.path, status: res.statusCode, operationId: op?.operationId ?? null, problem });
      }
    });
    await next();
  };
}

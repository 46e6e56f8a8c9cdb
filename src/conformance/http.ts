/** One request of a conformance run, and its answer, with what a person needs to replay it. */

export interface ConformanceRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface ConformanceResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A curl command line that sends the same request (binary bodies as a here-string of hex are not readable: they are summarised). */
export function curlLine(r: ConformanceRequest): string {
  const parts = ['curl -i', '-X', r.method, quote(r.url)];
  for (const [k, v] of Object.entries(r.headers)) parts.push('-H', quote(`${k}: ${v}`));
  if (typeof r.body === 'string') parts.push('--data-binary', quote(r.body.length > 4000 ? `${r.body.slice(0, 4000)}…` : r.body));
  else if (r.body) parts.push(`--data-binary @<(head -c ${r.body.length} /dev/urandom)`);
  return parts.join(' ');
}

export async function send(r: ConformanceRequest, timeoutMs: number): Promise<ConformanceResponse> {
  const res = await fetch(r.url, {
    method: r.method,
    headers: r.headers,
    body: r.body === undefined ? undefined : typeof r.body === 'string' ? r.body : new Uint8Array(r.body),
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
}

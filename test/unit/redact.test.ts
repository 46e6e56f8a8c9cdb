/**
 * URL credentials never reach the audit trail or a log: every spelling the WHATWG parser (which
 * fetch uses) reads as a user name or password is redacted, and nothing else of the text changes.
 */
import { describe, expect, it } from 'vitest';
import { redactSecrets, redactUrlCredentials } from '../../src/ground/redact.js';

describe('redactUrlCredentials', () => {
  it.each([
    ['https://user:pass@host/x', 'https://[redacted]@host/x', 'user'],
    ['https://pass@host', 'https://[redacted]@host', 'pass'],
    ['https://:pass@host:8443/', 'https://[redacted]@host:8443/', 'pass'],
    ['https://a@b:c@host/p@q', 'https://[redacted]@host/p@q', 'b:c'],
    ['https:///user:pass@host', 'https:///[redacted]@host', 'user'],
    ['https:\\\\user:pass@host', 'https:\\\\[redacted]@host', 'user'],
    ['HTTPS://User:Pass@Host', 'HTTPS://[redacted]@Host', 'Pass'],
    ['https://us\ter:pa\nss@host', 'https://[redacted]@host', 'ss'],
    ['call https://u:p@a.example then https://v:q@b.example', 'call https://[redacted]@a.example then https://[redacted]@b.example', 'q@'],
  ])('%j → %j', (text, redacted, secret) => {
    expect(redactUrlCredentials(text)).toBe(redacted);
    expect(redactUrlCredentials(text)).not.toContain(secret);
  });

  it.each(['https://host/path@x', 'mailto:bob@example.com', 'see https://a.example and mail a@b.example', 'plain text with an @ sign'])('leaves %j alone', (text) => {
    expect(redactUrlCredentials(text)).toBe(text);
  });

  it('applies to every string of a JSON value, beside the secret-named members', () => {
    expect(redactSecrets({ url: 'https://u:p@h', clientSecret: 's', nested: [{ note: 'http://x:y@z/' }] })).toEqual({ url: 'https://[redacted]@h', clientSecret: '[redacted]', nested: [{ note: 'http://[redacted]@z/' }] });
  });
});

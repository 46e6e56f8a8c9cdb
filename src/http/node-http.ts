/**
 * node:http, loaded through require rather than imported as an ES module. An ES import builds the
 * module's namespace by reading every export, and three of them (WebSocket, CloseEvent,
 * MessageEvent) are getters that load Node's bundled undici and http2: ~13 MB resident for a
 * server that never opens a WebSocket. Type-only imports of node:http are erased and stay as they are.
 */
import { createRequire } from 'node:module';
import type * as Http from 'node:http';

const http = createRequire(import.meta.url)('node:http') as typeof Http;

export const createServer = http.createServer;
export const STATUS_CODES = http.STATUS_CODES;

/**
 * The fixture corpus (test/fixtures/corpus) on loopback, plus the media its pages load: tones
 * (WAV, generated here: media/tone-1s.wav, media/tone-5s.wav, and silence: media/silence-2s.wav), a captions file, a 1×1 PNG. Every
 * other path is a 404, which is what pages linking to /news/… or transcript.html should get.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PageToCheck } from '../../src/domain/scan/engine.js';
import { fetchPage, type FetchOptions } from '../../src/domain/scan/fetch-page.js';

export const CORPUS_DIR = new URL('../fixtures/corpus/', import.meta.url);

export interface CorpusPage {
  file: string;
  row: string;
  fails: string[];
  passes: string[];
  standard?: 'WCAG2A' | 'WCAG2AA' | 'WCAG2AAA';
}

/** A corpus page as the crawler would hand it to an engine: fetched from the site, with its standard. */
export async function corpusInput(site: CorpusSite, page: CorpusPage, fetch: FetchOptions): Promise<PageToCheck> {
  const fetched = await fetchPage(site.url(`/${page.file}`), fetch);
  return { url: fetched.url, html: fetched.html, standard: page.standard ?? 'WCAG2AA' };
}

export async function corpusManifest(): Promise<CorpusPage[]> {
  return (JSON.parse(await readFile(new URL('manifest.json', CORPUS_DIR), 'utf8')) as { pages: CorpusPage[] }).pages;
}

export interface CorpusSite {
  origin: string;
  url(path: string): string;
  /** Request paths in arrival order. */
  requests: string[];
  close(): Promise<void>;
}

/** 8 kHz, 8-bit mono PCM: a 440 Hz tone of `seconds` (`amplitude` 0: silence of that length). */
export function tone(seconds: number, amplitude = 60): Buffer {
  const rate = 8000;
  const samples = Math.round(rate * seconds);
  const wav = Buffer.alloc(44 + samples);
  wav.write('RIFF', 0); wav.writeUInt32LE(36 + samples, 4); wav.write('WAVE', 8);
  wav.write('fmt ', 12); wav.writeUInt32LE(16, 16); wav.writeUInt16LE(1, 20); wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24); wav.writeUInt32LE(rate, 28); wav.writeUInt16LE(1, 32); wav.writeUInt16LE(8, 34);
  wav.write('data', 36); wav.writeUInt32LE(samples, 40);
  for (let i = 0; i < samples; i++) wav[44 + i] = 128 + Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / rate));
  return wav;
}

const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export async function startCorpusSite(): Promise<CorpusSite> {
  const requests: string[] = [];
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://corpus').pathname;
    requests.push(path);
    const tones = /^\/media\/tone-(\d)s\.wav$/.exec(path);
    if (tones) return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone(Number(tones[1])));
    const silence = /^\/media\/silence-(\d)s\.wav$/.exec(path);
    if (silence) return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone(Number(silence[1]), 0));
    if (path === '/media/clip.vtt') return void res.writeHead(200, { 'content-type': 'text/vtt' }).end('WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n');
    if (path === '/media/logo.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_1X1);
    if (/^\/((frames|linked)\/)?[a-z0-9-]+\.html$/.test(path)) {
      try {
        const body = await readFile(new URL(path.slice(1), CORPUS_DIR));
        return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      } catch {
        // falls through to 404
      }
    }
    res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Not found</title><p>Not found</p></html>');
  };
  const server: Server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (p) => `${origin}${p}`,
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

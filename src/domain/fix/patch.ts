/**
 * The unified diff of a draft against the snippet it fixes: HTML, then CSS when both were given.
 * Its cost grows with the product of the lines and the lines changed (a snippet with one changed
 * element per line, 100 kB of them, takes seconds), so it runs in the compute pool.
 */
import { createTwoFilesPatch } from 'diff';

const withNewline = (s: string) => (s.endsWith('\n') ? s : `${s}\n`);

export const filePatch = (name: string, before: string, after: string) =>
  createTwoFilesPatch(`original/${name}`, `fixed/${name}`, withNewline(before), withNewline(after), undefined, undefined, { context: 3 }).replace(/^=+\n/, '');

export interface DraftSides {
  htmlBefore: string;
  htmlAfter: string;
  cssBefore?: string;
  cssAfter?: string;
}

export function draftPatch({ htmlBefore, htmlAfter, cssBefore, cssAfter }: DraftSides): string {
  return filePatch('snippet.html', htmlBefore, htmlAfter) + (cssAfter !== undefined && cssBefore !== undefined ? filePatch('styles.css', cssBefore, cssAfter) : '');
}

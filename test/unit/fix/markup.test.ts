import { describe, expect, it } from 'vitest';
import { Markup, patchStartTag } from '../../../src/domain/fix/markup.js';

function edit(source: string, change: (doc: Document) => void): string {
  const markup = Markup.parse(source);
  change(markup.document);
  return markup.serialize();
}

describe('Markup: minimal re-serialisation', () => {
  it('returns untouched input byte for byte, fragments and documents alike', () => {
    for (const source of [
      '<IMG SRC=a.png>',
      '<p class=x>a &amp; b &nbsp;<br/>c<p>d',
      '<!DOCTYPE html>\n<html>\n<head>\n<title>x</title>\n</head>\n<body><p>x</p></body>\n</html>\n',
      'plain text & more',
    ]) {
      expect(edit(source, () => {})).toBe(source);
    }
  });

  it('patches only the attributes that changed, keeping quotes and the self-closing slash', () => {
    expect(patchStartTag("<img src='a.png' width=10 />", [['src', 'a.png'], ['width', '10']], [['src', 'a.png'], ['width', '20'], ['alt', '']])).toBe(
      "<img src='a.png' width=\"20\" alt=\"\" />",
    );
    expect(patchStartTag('<a  href="/x"  class="c">', [['href', '/x'], ['class', 'c']], [['href', '/x']])).toBe('<a  href="/x">');
    expect(patchStartTag('<div onClick="go()">', [['onclick', 'go()']], [['onclick', 'go()'], ['title', 'a "b" & c']])).toBe(
      '<div onClick="go()" title="a &quot;b&quot; &amp; c">',
    );
  });

  it('prints new elements and keeps moved original nodes as they were written', () => {
    const out = edit('<div>\n  <p><b>Fish &amp; chips</b></p>\n</div>', (doc) => {
      const p = doc.querySelector('p')!;
      const h2 = doc.createElement('h2');
      h2.append(...Array.from(p.querySelector('b')!.childNodes));
      p.replaceWith(h2);
    });
    expect(out).toBe('<div>\n  <h2>Fish &amp; chips</h2>\n</div>');
  });

  it('inserts new nodes next to their siblings and into implied elements', () => {
    expect(edit('<input id="a">', (doc) => doc.querySelector('input')!.before(doc.createElement('label')))).toBe('<label></label><input id="a">');
    expect(
      edit('<!doctype html><html><body>x</body></html>', (doc) => {
        doc.head.append(doc.createElement('title'));
      }),
    ).toBe('<!doctype html><html><head><title></title></head><body>x</body></html>');
    expect(edit('<p>Hola</p>', (doc) => doc.documentElement.setAttribute('lang', 'es'))).toBe('<html lang="es"><p>Hola</p>');
  });

  it('escapes changed text and attribute values', () => {
    expect(edit('<p>a</p>', (doc) => (doc.querySelector('p')!.textContent = '<b> & "q"'))).toBe('<p>&lt;b&gt; &amp; "q"</p>');
  });
});

import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { contextPrefix, Markup, patchStartTag } from '../../../src/domain/fix/markup.js';

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

describe('Markup: where each node sits in the source', () => {
  /** Markup the HTML parser rearranges: foster parenting, adoption, foreign content, implied and merged elements. */
  const TRICKY = [
    '<table><tr><td>a</td></tr><b>bold</b></table>after',
    '<b>1<i>2</b>3</i>4<p>5<b>6<p>7</b>8',
    '<template><p id=t>in template</p></template><p>after</p>',
    '<svg viewBox="0 0 1 1"><foreignObject><p>x</p></foreignObject><title>t</title></svg><math><mi>x</mi></math>',
    '<!-- lead --><!DOCTYPE html><html lang=en><head><title>T</title></head><body class=a><p>x</p></body></html><!-- tail -->',
    '<html><body a=1><p>x</p><html b=2><body c=3><p>y</p>',
    '<pre>\nfirst line</pre><textarea>\nkept</textarea><listing>\nx</listing>',
    '<p>a\r\nb\rc &amp; &nbsp; &#x41; &notanentity;</p>',
    '<tr><td>row only</td></tr><tr><td>2</td></tr>',
    '<td>cell only</td><td>2</td>',
    '<ul><li>one<li>two</ul><dl><dt>t<dd>d</dl><select><option>a<option>b</select>',
    '<p>one<div>block closes p</div>two</p>',
    '<frameset><frame src=a></frameset>',
    `${'<div>'.repeat(50)}deep${'</div>'.repeat(50)}`,
    `<p>${'a b c<br>'.repeat(200)}</p>`,
  ];

  /** The start of a node as jsdom's own location tracking gives it (Markup.sourceStart's meaning). */
  function expectedStart(dom: JSDOM, node: Node, shift: number): number | null {
    const loc = dom.nodeLocation(node);
    if (loc && loc.startOffset >= shift) return loc.startOffset - shift;
    for (const child of Array.from(node.childNodes)) {
      const start = expectedStart(dom, child, shift);
      if (start !== null) return start;
    }
    return null;
  }

  it('is where jsdom itself locates it, node for node, for markup the parser rearranges', () => {
    for (const source of TRICKY) {
      const prefix = contextPrefix(source);
      const reference = new JSDOM(prefix + source, { includeNodeLocations: true });
      const markup = Markup.parse(source);
      const pairs: Array<[Node, Node]> = [[markup.document, reference.window.document]];
      let compared = 0;
      while (pairs.length > 0) {
        const [mine, theirs] = pairs.pop()!;
        expect(mine.nodeName, source).toBe(theirs.nodeName);
        expect(markup.sourceStart(mine), `${source}: ${mine.nodeName}`).toBe(expectedStart(reference, theirs, prefix.length));
        expect(mine.childNodes.length, source).toBe(theirs.childNodes.length);
        mine.childNodes.forEach((child, i) => pairs.push([child, theirs.childNodes[i]!]));
        compared++;
      }
      expect(compared).toBeGreaterThan(3);
      // Untouched, every one of them serialises to itself.
      expect(Markup.with(source, (m) => m.serialize())).toBe(source);
    }
  });

  it("takes text the parser moves out of a table, which jsdom's own location tracking fails on", () => {
    const source = '<table>text before<tr><td>a</td></tr>more</table>after';
    expect(() => new JSDOM(source, { includeNodeLocations: true })).toThrow(TypeError);
    const fixed = Markup.with(source, (m) => {
      // Before the table, as a browser has it (jsdom's parser alone puts it after the table).
      expect(m.body.firstChild!.textContent).toBe('text beforemore');
      m.document.querySelector('td')!.setAttribute('scope', 'row');
      return m.serialize();
    });
    expect(fixed).toBe('<table>text before<tr><td scope="row">a</td></tr>more</table>after');
  });

  it('locates an element the parser moved out of <noscript> in the head, where jsdom gives it no place', () => {
    const source = '<noscript><img src=a.png></noscript><p>x';
    const fixed = Markup.with(source, (m) => {
      const img = m.document.querySelector('img')!;
      expect(m.sourceStart(img)).toBe(10);
      img.setAttribute('alt', '');
      return m.serialize();
    });
    expect(fixed).toBe('<noscript><img src=a.png alt=""></noscript><p>x');
  });
});

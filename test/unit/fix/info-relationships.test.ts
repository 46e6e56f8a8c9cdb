import { describe, expect, it } from 'vitest';
import { draft, expectAxeFixes, parse } from './axe-helpers.js';

const fix = (html: string, issueMessage = '') => draft('1.3.1', html, { issueMessage });

describe('1.3.1 fake headings', () => {
  it('turns a bold-only paragraph into an h2', async () => {
    const html = '<p><b>Our services</b></p>\n<p>We design and host websites.</p>';
    const result = fix(html, 'Text styled as a heading is not marked up as a heading');
    expect(result.fixedHtml).toBe('<h2>Our services</h2>\n<p>We design and host websites.</p>');
    expect(result.effort).toBe('medium');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('turns a div with a heading class into a heading, keeping its class', () => {
    const result = fix('<div class="section-title">Contact us</div><p>Call us.</p>');
    expect(result.fixedHtml).toBe('<h2 class="section-title">Contact us</h2><p>Call us.</p>');
  });

  it('uses the level below a preceding real heading, the same for every sibling', () => {
    const html = '<h2>Services</h2>\n<p><strong>Consulting</strong></p>\n<p>Advice.</p>\n<p><strong>Training</strong></p>\n<p>Courses.</p>';
    const doc = parse(fix(html).fixedHtml);
    expect(Array.from(doc.querySelectorAll('h3'), (h) => h.textContent)).toEqual(['Consulting', 'Training']);
    expect(doc.querySelectorAll('p')).toHaveLength(2);
  });

  it('recognises large inline-styled text and an explicit h-level class', () => {
    const doc = parse(fix('<p style="font-size: 24px; font-weight: bold">Opening hours</p><div class="h4">Holidays</div>').fixedHtml);
    expect(doc.querySelector('h2')!.textContent).toBe('Opening hours');
    expect(doc.querySelector('h4')!.textContent).toBe('Holidays');
  });

  it('splits a bold lead line from the text after it', () => {
    const result = fix('<p><strong>Opening hours</strong><br>Mon–Fri 9–17</p>');
    expect(result.fixedHtml).toBe('<h2>Opening hours</h2><p>Mon–Fri 9–17</p>');
  });

  it('does not promote bold words inside a sentence or a full sentence in bold', () => {
    const html = '<p><b>Note:</b> prices include VAT.</p><p><b>Please read the terms before ordering.</b></p>';
    expect(fix(html, 'heading').fixedHtml).toBe(html);
  });
});

describe('1.3.1 fake lists', () => {
  it('turns bullet paragraphs into a ul, stripping the typed bullets', async () => {
    const html = '<p>• Apples</p>\n<p>• Pears &amp; plums</p>\n<p>• Cherries</p>';
    const result = fix(html, 'List items are not marked up as a list');
    expect(result.fixedHtml).toBe('<ul><li>Apples</li>\n<li>Pears &amp; plums</li>\n<li>Cherries</li></ul>');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('turns <br>-separated dash lines in a paragraph into a list after the intro', async () => {
    const html = '<p>Ingredients:<br>\n- Flour<br>\n- Sugar<br>\n- Eggs</p>';
    const result = fix(html);
    const doc = parse(result.fixedHtml);
    expect(doc.querySelector('p')!.textContent).toBe('Ingredients:');
    expect(Array.from(doc.querySelectorAll('ul > li'), (li) => li.textContent)).toEqual(['Flour', 'Sugar', 'Eggs']);
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('makes an ordered list from numbered lines, keeping inline markup and the start number', () => {
    const doc = parse(fix('<div>3. Open the box<br>4. Remove the <b>device</b><br>5. Plug it in</div>').fixedHtml);
    const ol = doc.querySelector('div > ol')!;
    expect(ol.getAttribute('start')).toBe('3');
    expect(Array.from(ol.children, (li) => li.innerHTML)).toEqual(['Open the box', 'Remove the <b>device</b>', 'Plug it in']);
  });

  it('accepts "*" and "-" markers but not negative numbers or a single line', () => {
    const doc = parse(fix('<p>* one</p><p>* two</p>').fixedHtml);
    expect(doc.querySelectorAll('ul li')).toHaveLength(2);
    const untouched = '<p>-5 degrees tonight</p><p>- only one line</p>';
    expect(fix(untouched, 'list').fixedHtml).toBe(untouched);
  });
});

describe('1.3.1 data tables', () => {
  it('turns the first row into column headers', async () => {
    const html = '<table>\n  <tr><td><b>Name</b></td><td>Age</td></tr>\n  <tr><td>Ann</td><td>31</td></tr>\n</table>';
    const result = fix(html, 'Data table has no header cells');
    expect(result.fixedHtml).toBe('<table>\n  <tr><th scope="col">Name</th><th scope="col">Age</th></tr>\n  <tr><td>Ann</td><td>31</td></tr>\n</table>');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('adds row headers when the top-left cell is empty', () => {
    const doc = parse(fix('<table><tr><td></td><td>Q1</td><td>Q2</td></tr><tr><td>North</td><td>1</td><td>2</td></tr></table>').fixedHtml);
    expect(Array.from(doc.querySelectorAll('th[scope=col]'), (t) => t.textContent)).toEqual(['Q1', 'Q2']);
    expect(Array.from(doc.querySelectorAll('th[scope=row]'), (t) => t.textContent)).toEqual(['North']);
  });

  it('leaves layout tables and tables with headers alone', () => {
    const html = '<table role="presentation"><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table><table><tr><th>x</th><th>y</th></tr><tr><td>1</td><td>2</td></tr></table>';
    expect(fix(html, 'table').fixedHtml).toBe(html);
  });

  it('handles a snippet that is only table rows', () => {
    expect(fix('<tr><td>Name</td><td>Age</td></tr><tr><td>Ann</td><td>31</td></tr>', 'table').fixedHtml).toBe(
      '<tr><th scope="col">Name</th><th scope="col">Age</th></tr><tr><td>Ann</td><td>31</td></tr>',
    );
  });
});

describe('1.3.1 labels from adjacent text', () => {
  it('wraps the text before a field in a label tied to a generated id', async () => {
    const html = 'Email: <input type="email" name="email">';
    const result = fix(html, 'Form elements must have labels');
    expect(result.fixedHtml).toBe('<label for="email">Email:</label> <input type="email" name="email" id="email">');
    expect(result.effort).toBe('low');
    await expectAxeFixes(html, result.fixedHtml, ['label']);
  });

  it('uses the previous table cell and the text after a checkbox', async () => {
    const html = '<table><tr><td>Your name</td><td><input name="fullname"></td></tr></table><input type="checkbox" name="news" id="news"> Send me the newsletter';
    const result = fix(html, 'label');
    const doc = parse(result.fixedHtml);
    expect(doc.querySelector('label[for=fullname]')!.textContent).toBe('Your name');
    expect(doc.querySelector('label[for=news]')!.textContent).toBe('Send me the newsletter');
    await expectAxeFixes(html, result.fixedHtml, ['label']);
  });
});

describe('1.3.1 malformed lists', () => {
  it('turns stray children of a list into list items', async () => {
    const html = '<ul class="menu">\n  <div class="item">Home</div>\n  <li>About</li>\n  <a href="/shop">Shop</a>\n</ul>';
    const result = fix(html, '<ul> and <ol> must only directly contain <li>, <script> or <template> elements');
    expect(result.fixedHtml).toBe('<ul class="menu">\n  <li class="item">Home</li>\n  <li>About</li>\n  <li><a href="/shop">Shop</a></li>\n</ul>');
    await expectAxeFixes(html, result.fixedHtml, ['list']);
  });

  it('puts orphan list items into a list', async () => {
    const html = '<div class="links">\n  <li>One</li>\n  <li>Two</li>\n</div>';
    const result = fix(html, '<li> elements must be contained in a <ul> or <ol>');
    expect(result.fixedHtml).toBe('<div class="links">\n  <ul><li>One</li>\n  <li>Two</li></ul>\n</div>');
    await expectAxeFixes(html, result.fixedHtml, ['listitem']);
  });

  it('accepts typographic bullets that touch the text', () => {
    expect(fix('<p>•Red</p><p>•Blue</p>', 'list').fixedHtml).toBe('<ul><li>Red</li><li>Blue</li></ul>');
  });
});

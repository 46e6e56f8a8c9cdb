import { describe, expect, it } from 'vitest';
import { labelFromIdentifier } from '../../../src/domain/fix/form-labels.js';
import { draft, expectAxeFixes, parse } from './axe-helpers.js';

const fix = (html: string) => draft('3.3.2', html, { issueMessage: 'Form elements must have labels' });

describe('3.3.2 Labels or Instructions', () => {
  it('adds a label from the field name, with a generated id', async () => {
    const html = '<input type="text" name="first_name">';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<label for="first-name">First name</label> <input type="text" name="first_name" id="first-name">');
    expect(result.placeholders).toEqual([]);
    expect(result.effort).toBe('low');
    await expectAxeFixes(html, result.fixedHtml, ['label']);
  });

  it('uses the existing id and the placeholder text', () => {
    const result = fix('<input id="q" type="search" placeholder="Search products">');
    expect(result.fixedHtml).toBe('<label for="q">Search products</label> <input id="q" type="search" placeholder="Search products">');
  });

  it('inserts a TODO label when nothing hints at the field\'s purpose', async () => {
    const html = '<textarea name="field_17"></textarea>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<label for="field-17">TODO: label</label> <textarea name="field_17" id="field-17"></textarea>');
    expect(result.placeholders).toEqual(['TODO: label']);
    await expectAxeFixes(html, result.fixedHtml, ['label']);
  });

  it('labels a select and places checkbox labels after the box', async () => {
    const html = '<select name="country"><option>France</option></select><input type="checkbox" name="terms" value="accepted">';
    const result = fix(html);
    const doc = parse(result.fixedHtml);
    expect(doc.querySelector('label[for=country]')!.textContent).toBe('Country');
    expect(doc.querySelector('input')!.nextElementSibling!.getAttribute('for')).toBe('terms-accepted');
    await expectAxeFixes(html, result.fixedHtml, ['select-name', 'label']);
  });

  it('keeps ids unique and skips hidden, submit and already-labelled fields', () => {
    const html = '<div id="email"></div><input type="email" name="email"><input type="hidden" name="t"><input type="submit"><label for="n">Name</label><input id="n">';
    const doc = parse(fix(html).fixedHtml);
    expect(doc.querySelector('input[type=email]')!.id).toBe('email-2');
    expect(doc.querySelectorAll('label')).toHaveLength(2);
  });

  it('turns adjacent text into the label rather than adding a second one', () => {
    expect(fix('<span>Phone</span> <input type="tel" name="tel">').fixedHtml).toBe('<label for="tel"><span>Phone</span></label> <input type="tel" name="tel" id="tel">');
  });

  it('adds a visible label for a field named only by aria-label', () => {
    expect(fix('<input aria-label="Postcode" name="pc">').fixedHtml).toBe('<label for="pc">Postcode</label> <input aria-label="Postcode" name="pc" id="pc">');
  });

  it('reads meaningful identifiers and rejects meaningless ones', () => {
    expect(labelFromIdentifier('emailAddress')).toBe('Email address');
    expect(labelFromIdentifier('q')).toBe('Search');
    expect(labelFromIdentifier('user[zip]')).toBe('Postcode');
    expect(labelFromIdentifier('input1')).toBeNull();
    expect(labelFromIdentifier('x')).toBeNull();
  });
});

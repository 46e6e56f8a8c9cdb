import { describe, expect, it } from 'vitest';
import { inferLanguage, isValidLang, repairLang } from '../../../src/domain/fix/recipes/language.js';
import { draft, expectAxeFixes } from './axe-helpers.js';

const asIs = (html: string) => html;

describe('2.4.2 Page Titled', () => {
  it('adds a placeholder title after <meta charset>, with the same indentation', async () => {
    const html = '<!DOCTYPE html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8">\n    <link rel="stylesheet" href="/a.css">\n  </head>\n  <body><h1>Opening hours</h1></body>\n</html>\n';
    const result = draft('2.4.2', html, { issueMessage: 'Documents must have <title> element to aid in navigation' });
    expect(result.fixedHtml).toBe(html.replace('<meta charset="utf-8">\n', '<meta charset="utf-8">\n    <title>TODO: page title</title>\n'));
    expect(result.placeholders).toEqual(['TODO: page title']);
    expect(result.explanation).toContain('"Opening hours"');
    expect(result.effort).toBe('low');
    await expectAxeFixes(html, result.fixedHtml, ['document-title'], asIs);
  });

  it('fills an empty title', async () => {
    const html = '<!doctype html><html lang="en"><head><title>  </title></head><body><p>Hi</p></body></html>';
    const result = draft('2.4.2', html);
    expect(result.fixedHtml).toBe('<!doctype html><html lang="en"><head><title>TODO: page title</title></head><body><p>Hi</p></body></html>');
    await expectAxeFixes(html, result.fixedHtml, ['document-title'], asIs);
  });

  it('writes a <head> when the document has none', async () => {
    const html = '<!doctype html><html lang="en"><body><p>Hi</p></body></html>';
    const result = draft('2.4.2', html);
    expect(result.fixedHtml).toBe('<!doctype html><html lang="en"><head><title>TODO: page title</title></head><body><p>Hi</p></body></html>');
    await expectAxeFixes(html, result.fixedHtml, ['document-title'], asIs);
  });

  it('works on a <head> snippet and leaves a titled page alone', () => {
    expect(draft('2.4.2', '<head>\n  <link rel="icon" href="/f.ico">\n</head>').fixedHtml).toBe('<head>\n  <title>TODO: page title</title>\n  <link rel="icon" href="/f.ico">\n</head>');
    const titled = '<!doctype html><html><head><title>Shop</title></head><body><svg><title></title></svg></body></html>';
    expect(draft('2.4.2', titled).fixedHtml).toBe(titled);
  });
});

describe('3.1.1 Language of Page', () => {
  it('infers German from the text', async () => {
    const html = '<!DOCTYPE html>\n<html>\n<head><title>Willkommen</title></head>\n<body><p>Wir sind ein kleines Team und freuen uns auf Ihren Besuch. Die Öffnungszeiten finden Sie auf der Kontaktseite.</p></body>\n</html>';
    const result = draft('3.1.1', html, { issueMessage: '<html> element must have a lang attribute' });
    expect(result.fixedHtml).toBe(html.replace('<html>', '<html lang="de">'));
    expect(result.placeholders).toEqual([]);
    await expectAxeFixes(html, result.fixedHtml, ['html-has-lang'], asIs);
  });

  it('infers French for an empty lang', async () => {
    const html = '<!DOCTYPE html><html lang=""><head><title>Accueil</title></head><body><p>Nous sommes une petite équipe et nous vous accueillons avec plaisir dans notre boutique.</p></body></html>';
    const result = draft('3.1.1', html);
    expect(result.fixedHtml).toContain('<html lang="fr">');
    await expectAxeFixes(html, result.fixedHtml, ['html-has-lang'], asIs);
  });

  it('repairs an invalid tag and keeps xml:lang in step', async () => {
    const html = '<!DOCTYPE html><html lang="en_GB" xml:lang="en_GB"><head><title>Home</title></head><body><p>Hello</p></body></html>';
    const result = draft('3.1.1', html);
    expect(result.fixedHtml).toBe(html.replace(/en_GB/g, 'en-GB'));
    await expectAxeFixes(html, result.fixedHtml, ['html-lang-valid'], asIs);
  });

  it('maps a language name such as "Deutsch" and reads og:locale', async () => {
    const named = '<!DOCTYPE html><html lang="Deutsch"><head><title>x</title></head><body></body></html>';
    const result = draft('3.1.1', named);
    expect(result.fixedHtml).toContain('lang="de"');
    await expectAxeFixes(named, result.fixedHtml, ['html-lang-valid'], asIs);
    const meta = '<!DOCTYPE html><html><head><title>x</title><meta property="og:locale" content="nl_NL"></head><body></body></html>';
    expect(draft('3.1.1', meta).fixedHtml).toContain('<html lang="nl-NL">');
  });

  it('falls back to "en" with a TODO comment when the language is unclear', async () => {
    const html = '<html class="no-js">';
    const result = draft('3.1.1', html);
    expect(result.fixedHtml).toBe('<html class="no-js" lang="en"><!-- TODO: confirm the page language (lang="en" was assumed) -->');
    expect(result.placeholders).toEqual(['TODO: confirm the page language']);
    const page = (h: string) => `${h}<head><title>t</title></head><body><p>42</p></body></html>`;
    await expectAxeFixes(html, result.fixedHtml, ['html-has-lang'], page);
  });

  it('recognises the other supported languages', () => {
    expect(inferLanguage('Bienvenidos a nuestra tienda. Es un lugar para toda la familia y los amigos.')).toBe('es');
    expect(inferLanguage('Welkom in onze winkel. Het is een plek voor de hele familie en ook voor vrienden.')).toBe('nl');
    expect(inferLanguage('Benvenuti nel nostro negozio. È un posto per tutta la famiglia e anche per gli amici.')).toBe('it');
    expect(inferLanguage('Welcome to our shop. It is a place for the whole family and your friends.')).toBe('en');
    expect(inferLanguage('OK 42')).toBeNull();
  });

  it('validates and repairs language tags', () => {
    expect(isValidLang('en')).toBe(true);
    expect(isValidLang('pt-BR')).toBe(true);
    expect(isValidLang('english')).toBe(false);
    expect(isValidLang('xx')).toBe(false);
    expect(repairLang('fr_CA')).toBe('fr-CA');
    expect(repairLang('Français')).toBe('fr');
    expect(repairLang('??')).toBeNull();
  });

  it('leaves a valid lang alone', () => {
    const html = '<!DOCTYPE html><html lang="en-US"><head><title>x</title></head><body></body></html>';
    expect(draft('3.1.1', html).fixedHtml).toBe(html);
  });
});

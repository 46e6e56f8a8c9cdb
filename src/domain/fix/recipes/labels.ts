/**
 * 3.3.2 Labels or Instructions: every form field gets a visible <label for>. Adjacent text becomes the
 * label when there is some; otherwise the text comes from the placeholder, title or name, or a TODO.
 */
import { collapse, contentText, isHiddenFromAssistiveTech, plural, quote } from '../dom.js';
import { draftWithFixers, type Finding } from '../drafting.js';
import {
  adjacentLabelSource,
  ensureFieldId,
  formFields,
  hasProgrammaticLabel,
  insertLabel,
  labelFromIdentifier,
  labelTextFor,
  wrapAsLabel,
} from '../form-labels.js';
import type { Markup } from '../markup.js';
import { Placeholder, type FixInput, type FixResult, type Recipe } from '../model.js';

function toggleValueLabel(field: Element): string | null {
  const type = (field.getAttribute('type') ?? '').toLowerCase();
  if (type !== 'checkbox' && type !== 'radio') return null;
  return labelFromIdentifier(field.getAttribute('value'));
}

export function labelUnlabelledFields(markup: Markup, options: { readonly needsLabel: (field: Element) => boolean; readonly useAriaLabel: boolean }): {
  labels: string[];
  placeholders: string[];
  sources: Set<string>;
} {
  const labels: string[] = [];
  const placeholders: string[] = [];
  const sources = new Set<string>();
  for (const field of formFields(markup.document)) {
    if (isHiddenFromAssistiveTech(field) || !options.needsLabel(field)) continue;
    const adjacent = adjacentLabelSource(field);
    if (adjacent !== null) {
      const text = collapse(contentText(adjacent));
      wrapAsLabel(adjacent, ensureFieldId(field, text));
      labels.push(text);
      sources.add('the text next to the field');
      continue;
    }
    const fromValue = toggleValueLabel(field);
    const { text, source } = fromValue !== null ? { text: fromValue, source: 'name' as const } : labelTextFor(field, options);
    insertLabel(field, text);
    labels.push(text);
    if (source === 'placeholder-todo') placeholders.push(Placeholder.label);
    else sources.add(source === 'name' ? "the field's name" : `its ${source}`);
  }
  return { labels, placeholders, sources };
}

function fixMissingLabels(markup: Markup): Finding | null {
  const { labels, placeholders, sources } = labelUnlabelledFields(markup, {
    needsLabel: (field) => !hasProgrammaticLabel(field),
    useAriaLabel: true,
  });
  if (labels.length === 0) return null;
  const from = sources.size === 0 ? '' : ` (text taken from ${Array.from(sources).join(' and ')})`;
  return {
    count: labels.length,
    headline: `${plural(labels.length, 'label')} added`,
    restructured: false,
    summary:
      labels.length === 1
        ? `A form field had no visible label tied to it, so users could not tell what to enter: added <label for> ${quote(labels[0]!)}${from}`
        : `${plural(labels.length, 'form field')} had no visible label tied to them, so users could not tell what to enter: added ${labels.length} <label for> elements${from}`,
    check:
      placeholders.length > 0
        ? `Replace "${Placeholder.label}" with a short label that says what to enter, and add format hints (e.g. date format) where needed.`
        : 'Check that each label says what to enter and add format hints where needed; placeholder text alone disappears while typing.',
    placeholders,
  };
}

export const labelsOrInstructions: Recipe = {
  criteria: ['3.3.2'],
  draft(input: FixInput): FixResult {
    return draftWithFixers(input, [fixMissingLabels], 'Every form field in the snippet already has a label; check that the labels and instructions are clear.');
  },
};

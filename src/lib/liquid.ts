import { Liquid } from 'liquidjs';
import type { FieldError } from '../errors/errors.js';

/**
 * The one Liquid engine for user templates (broadcast content, templates). HTML output is escaped by
 * default only where the caller asks for it; no file system access (no include/render of files).
 */
/**
 * The time one render may take, in milliseconds. Renders are synchronous (our templates have no file
 * system and no async filters), so this is the longest a render holds the event loop; LiquidJS measures it by the
 * wall clock, so a loaded machine counts time the render did not use. An ordinary broadcast renders in well under a
 * millisecond. A template that reaches it fails to render.
 */
export const RENDER_LIMIT_MS = 100;

/** The engine's settings (tests build an engine without the wall-clock render limit from them). */
export const LIQUID_OPTIONS = {
  strictFilters: true, // an unknown filter is a template error, found when the template is saved
  strictVariables: false, // a missing contact property renders empty (use `| default:`)
  ownPropertyOnly: true,
  relativeReference: false,
  templates: {}, // an in-memory, empty file system: {% include %} and {% render %} find nothing
  parseLimit: 2 * 1024 * 1024 + 1024,
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: 64 * 1024 * 1024,
} as const;

export const liquid = new Liquid(LIQUID_OPTIONS);

/** For HTML bodies: every `{{ output }}` is HTML-escaped (a contact named `<script>` stays text); `| raw` opts out. */
export const liquidHtml = new Liquid({ ...LIQUID_OPTIONS, outputEscape: 'escape' });

/**
 * For the text part made from an HTML template (sending/deliveries/message.text.ts): the plain engine with one more
 * filter, `fold_whitespace`, that the derivation puts after each output, so that a value's line breaks and runs of
 * spaces read as one space, as they did in the HTML the text was made from (a contact's property could otherwise start
 * lines of its own in the text part, a `-- ` signature line among them). Not offered to the templates users write.
 */
export const liquidTextOfHtml = new Liquid(LIQUID_OPTIONS);
liquidTextOfHtml.registerFilter('fold_whitespace', (v: unknown) =>
  typeof v === 'string' ? v.replace(/\s+/g, ' ') : v,
);

/** Parses each named template; returns one error per template that does not parse (with JSON Pointer paths). */
export function liquidErrors(templates: Record<string, string | null | undefined>, basePath: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, source] of Object.entries(templates)) {
    if (source == null) continue;
    try {
      liquid.parse(source);
    } catch (err) {
      errors.push({
        path: `${basePath}/${key}`,
        message: `is not a valid Liquid template: ${(err as Error).message.split('\n')[0]}`,
      });
    }
  }
  return errors;
}

/** Renders a template source (synchronously: see RENDER_LIMIT_MS). */
export function renderTemplate(
  source: string | null,
  scope: Record<string, unknown>,
  kind: 'text' | 'html' = 'text',
): string | null {
  if (source == null) return null;
  return (kind === 'html' ? liquidHtml : liquid).parseAndRenderSync(source, scope) as string;
}

/** True when a render failed because it reached RENDER_LIMIT_MS (or the memory limit): the template, not the data, is at fault. */
export function isRenderLimit(err: unknown): boolean {
  return err instanceof Error && /limit exceeded/.test(err.message);
}

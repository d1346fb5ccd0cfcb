import { isRenderLimit, liquid, liquidHtml, liquidTextOfHtml, renderTemplate } from '../../lib/liquid.js';
import type { WorkspaceScope } from '../../mail/documents.js';
import { markTemplateLinks } from '../tracking/tracking.template.js';
import { textTemplateOf, tidyText, type TextTemplate } from './message.text.js';

/**
 * A broadcast's content rendered for one recipient (deliveries/CONTEXT.md, "Render"): what the delivery pipeline
 * sends, and what the broadcasts API's previews and test sends show, so that both are the same.
 */

/** The templates of a message: a broadcast's `emailContent` (its editor's document aside). */
export interface MessageTemplates {
  subject: string | null;
  html: string | null;
  text: string | null;
  previewText: string | null;
}

/**
 * What a broadcast's Liquid templates see: `contact`, `broadcast`, `unsubscribe_url`, `webversion_url` (the
 * recipient's own message in a browser, docs/archive.md) and `workspace` (its name and postal address: a block
 * document's footer prints `{{ workspace.postal_address }}`).
 */
export interface RenderScope {
  contact: { email: string; firstName: string | null; lastName: string | null; properties: Record<string, unknown> };
  broadcast: { id: string; name: string };
  unsubscribe_url: string;
  /** Absent where there is no such page (a confirmation email); empty on the web version and archive pages themselves. */
  webversion_url?: string;
  workspace: WorkspaceScope;
}

/** A contact as the templates see it (`contact.email`, `contact.firstName`, …). */
export function contactScope(c: RenderScope['contact']): RenderScope['contact'] {
  return { email: c.email, firstName: c.firstName, lastName: c.lastName, properties: c.properties };
}

export interface RenderedContent {
  subject: string | null;
  html: string | null;
  text: string | null;
  previewText: string | null;
  /**
   * The HTML carries the marks of its tracked links (tracking/tracking.template.ts): only from prepareContent with
   * `markLinks`; trackMessage's `links` takes them out (or unmarkLinks).
   */
  linksMarked?: boolean;
}

/** Renders one recipient's content. The HTML body escapes every output; subject, text and preheader do not. */
export function renderContent(content: MessageTemplates, scope: RenderScope): RenderedContent {
  const vars = scope as unknown as Record<string, unknown>;
  // Without a text of its own, the text the sends make from the HTML template (message.text.ts), so that a preview or
  // a test send shows the text part a send carries.
  const derived = content.text == null && content.html != null ? textTemplateOf(content.html) : null;
  const text = derived
    ? (liquidTextOfHtml.parseAndRenderSync(derived.source, vars) as string)
    : renderTemplate(content.text, vars);
  return {
    subject: renderTemplate(content.subject, vars),
    html: renderTemplate(content.html, vars, 'html'),
    text: derived?.hasTags ? tidyText(text!) : text,
    previewText: renderTemplate(content.previewText, vars),
  };
}

/**
 * The broadcast's templates parsed once, rendered per recipient: what the delivery pipeline uses, so a
 * million recipients cost one parse. A template that reaches the render limit LIMIT_OVERRUNS times in a row is not
 * tried again: every later render of this broadcast fails at once with the same error.
 */
const LIMIT_OVERRUNS = 3;

export function prepareContent(
  content: MessageTemplates,
  opts: { markLinks?: boolean } = {},
): (scope: RenderScope) => RenderedContent {
  const parse = (engine: typeof liquid, source: string | null) => (source == null ? null : engine.parse(source));
  const subject = parse(liquid, content.subject);
  // Clicks tracked: the HTML's links found once, here, when Liquid cannot move them (tracking.template.ts).
  const marked = opts.markLinks && content.html != null ? markTemplateLinks(content.html) : null;
  const html = parse(liquidHtml, marked ?? content.html);
  // No text of its own: the HTML's text made once, here, with its Liquid, instead of from each message's HTML.
  const derived: TextTemplate | null =
    content.text == null && content.html != null ? textTemplateOf(content.html) : null;
  const textEngine = derived ? liquidTextOfHtml : liquid;
  const text = parse(textEngine, derived ? derived.source : content.text);
  const previewText = parse(liquid, content.previewText);
  let limitError: Error | null = null;
  let overruns = 0;
  return (scope) => {
    if (limitError) throw limitError;
    const vars = scope as unknown as Record<string, unknown>;
    const render = (engine: typeof liquid, tpl: ReturnType<typeof liquid.parse> | null) =>
      tpl ? (engine.renderSync(tpl, vars) as string) : null;
    try {
      const out = {
        subject: render(liquid, subject),
        html: render(liquidHtml, html),
        text: derived?.hasTags ? tidyText(render(textEngine, text)!) : render(textEngine, text),
        previewText: render(liquid, previewText),
        ...(marked !== null ? { linksMarked: true } : {}),
      };
      overruns = 0;
      return out;
    } catch (err) {
      // The limit is wall-clock time: a loaded machine can pass it once with an ordinary template. Three renders in a
      // row over it say the template is the cause.
      if (isRenderLimit(err) && ++overruns >= LIMIT_OVERRUNS) limitError = err as Error;
      throw err;
    }
  };
}

import type { ContactRecord } from '../contacts/contacts.repository.js';
import { liquid, liquidHtml, renderTemplate } from '../lib/liquid.js';
import type { EmailContent } from './broadcasts.schemas.js';

/** What a broadcast's Liquid templates see: `contact`, `broadcast` and `unsubscribe_url`. */
export interface RenderScope {
  contact: Pick<ContactRecord, 'email' | 'firstName' | 'lastName' | 'properties'>;
  broadcast: { id: string; name: string };
  unsubscribe_url: string;
}

export interface RenderedContent {
  subject: string | null;
  html: string | null;
  text: string | null;
  previewText: string | null;
}

/** Stand-in recipient for previews without a contact. */
export const SAMPLE_CONTACT: RenderScope['contact'] = { email: 'jane.doe@example.com', firstName: 'Jane', lastName: 'Doe', properties: {} };

/** Renders one recipient's content. The HTML body escapes every output; subject, text and preheader do not. */
export async function renderContent(content: EmailContent, scope: RenderScope): Promise<RenderedContent> {
  const vars = scope as unknown as Record<string, unknown>;
  const [subject, html, text, previewText] = await Promise.all([
    renderTemplate(content.subject, vars),
    renderTemplate(content.html, vars, 'html'),
    renderTemplate(content.text, vars),
    renderTemplate(content.previewText, vars),
  ]);
  return { subject, html, text, previewText };
}

/**
 * The broadcast's templates parsed once, rendered per recipient: what the delivery pipeline uses, so a
 * million recipients cost one parse.
 */
export function prepareContent(content: EmailContent): (scope: RenderScope) => Promise<RenderedContent> {
  const parse = (engine: typeof liquid, source: string | null) => (source == null ? null : engine.parse(source));
  const subject = parse(liquid, content.subject);
  const html = parse(liquidHtml, content.html);
  const text = parse(liquid, content.text);
  const previewText = parse(liquid, content.previewText);
  return async (scope) => {
    const vars = scope as unknown as Record<string, unknown>;
    const render = async (engine: typeof liquid, tpl: ReturnType<typeof liquid.parse> | null) => (tpl ? ((await engine.render(tpl, vars)) as string) : null);
    return {
      subject: await render(liquid, subject),
      html: await render(liquidHtml, html),
      text: await render(liquid, text),
      previewText: await render(liquid, previewText),
    };
  };
}

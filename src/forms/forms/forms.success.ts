import type { FieldError } from '../../errors/errors.js';
import { liquidErrors, renderTemplate } from '../../lib/liquid.js';

/**
 * A MESSAGE success action's text is a Liquid template (docs/forms.md, "The success message"), rendered with what the
 * person just submitted: each answer by its form field name (`{{ first_name }}`, and `{{ fields["first-name"] }}` for
 * a name Liquid cannot spell), and `contact` (`email`, `firstName`, `lastName`, `properties`) as the fieldMapping makes
 * it from those answers. Only the submission's own values: never what the database holds about the address (whoever
 * types an address must not see its contact's data). A template that does not parse is refused when the form is saved
 * (422 at /settings/successAction/message); the rendered text is shown as text (escaped in the page, `textContent` in an
 * embed), so a value cannot inject markup.
 */

/** Whether the message has Liquid in it (most do not: they are shown as they are, and their page is cached). */
export function isPersonalised(message: string | undefined): boolean {
  return message !== undefined && /\{\{|\{%/.test(message);
}

/** The parse errors of a success message, at its pointer. */
export function successMessageErrors(message: string | undefined): FieldError[] {
  return isPersonalised(message) ? liquidErrors({ message }, '/settings/successAction') : [];
}

/** What a rendered message can use: the submission's answers and the contact they make. */
export interface SuccessScope {
  fields: Record<string, unknown>;
  contact: {
    email: string | null;
    firstName: string | null;
    lastName: string | null;
    properties: Record<string, unknown>;
  };
}

export const EMPTY_SUCCESS_SCOPE: SuccessScope = {
  fields: {},
  contact: { email: null, firstName: null, lastName: null, properties: {} },
};

/**
 * The message rendered with the scope. A message without Liquid comes back as it is; one that fails to render (the
 * render limit) comes back as `fallback`: the submission is stored already, and the person still gets an answer.
 */
export function renderSuccessMessage(message: string, scope: SuccessScope, fallback: string): string {
  if (!isPersonalised(message)) return message;
  try {
    // The answers by name first, so that `fields` and `contact` are always the service's own.
    const rendered = renderTemplate(message, { ...scope.fields, fields: scope.fields, contact: scope.contact }) ?? '';
    return rendered.trim() ? rendered : fallback;
  } catch {
    return fallback;
  }
}

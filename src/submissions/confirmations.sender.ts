import type { FastifyBaseLogger } from 'fastify';
import { contactEmail } from '../contacts/contacts.email.js';
import { getContact } from '../contacts/contacts.repository.js';
import type { Db } from '../db/connection.js';
import { firstVerifiedDomain, getSigningKey } from '../domains/domains.repository.js';
import { getForm } from '../forms/forms.repository.js';
import { renderTemplate } from '../lib/liquid.js';
import { htmlToText } from '../mail/compose.js';
import type { Mailer } from '../mail/transport.js';
import { getTemplate } from '../templates/templates.repository.js';
import { getWorkspace } from '../workspaces/workspaces.repository.js';
import * as repo from './submissions.repository.js';

/** The confirmation email when a form names no template of its own (doubleOptInEmailId null). */
export const BUILT_IN_CONFIRMATION = {
  subject: 'Please confirm your subscription to {{ form.name }}',
  html: '<p>Hi{% if contact.firstName %} {{ contact.firstName }}{% endif %},</p>'
    + '<p>Please confirm that you want to receive emails from us:</p>'
    + '<p><a href="{{ confirm_url }}">Confirm my subscription</a></p>'
    + '<p>If you did not sign up, ignore this email and you will not hear from us.</p>',
  text: null as string | null,
};

const MAX_ATTEMPTS = 8;
const RETRY_MS = 60_000;

/**
 * Sends the double opt-in emails the submissions created (a worker job, so a slow or failing SMTP server
 * never fails a sign-up): from no-reply@ the workspace's oldest verified domain, DKIM-signed, with
 * `confirm_url` in the template's scope. Failures are retried a minute later, a few times.
 */
export class ConfirmationSender {
  constructor(private readonly db: Db, private readonly mailer: Mailer, private readonly publicUrl: string, private readonly log: FastifyBaseLogger) {}

  async sendDue(limit = 20): Promise<number> {
    const k = this.db.kysely;
    const now = Date.now();
    const due = await repo.claimDueConfirmations(k, new Date(now).toISOString(), new Date(now + RETRY_MS).toISOString(), MAX_ATTEMPTS, limit);
    for (const c of due) {
      try {
        await this.send(c);
        await repo.markConfirmationEmail(k, c.workspaceId, c.id, { sentAt: new Date().toISOString() });
      } catch (err) {
        this.log.warn({ err, confirmationId: c.id }, 'confirmation email failed; will retry');
        await repo.markConfirmationEmail(k, c.workspaceId, c.id, { error: (err as Error).message });
      }
    }
    return due.length;
  }

  private async send(c: repo.ConfirmationRecord): Promise<void> {
    const k = this.db.kysely;
    const [contact, form, workspace, domain] = await Promise.all([
      getContact(k, c.workspaceId, c.contactId), getForm(k, c.workspaceId, c.formId), getWorkspace(k, c.workspaceId), firstVerifiedDomain(k, c.workspaceId),
    ]);
    if (!contact || !form) throw new Error('the contact or the form is gone');
    if (contactEmail(contact.email) !== contact.email) throw new Error('the stored address is not a valid single address');
    if (!domain) throw new Error('the workspace has no verified sending domain to send the confirmation from');
    const key = await getSigningKey(k, c.workspaceId, domain);
    const template = form.doubleOptInEmailId ? await getTemplate(k, c.workspaceId, form.doubleOptInEmailId) : undefined;
    const source = template ?? BUILT_IN_CONFIRMATION;
    const scope = {
      contact: { email: contact.email, firstName: contact.firstName, lastName: contact.lastName, properties: contact.properties },
      form: { id: form.id, name: form.name },
      confirm_url: `${this.publicUrl}/confirm/${c.token}`,
    };
    const subject = renderTemplate(source.subject ?? 'Please confirm your subscription', scope);
    const html = renderTemplate(source.html, scope, 'html');
    const text = renderTemplate(source.text, scope);
    const sender = (workspace?.name ?? 'Formcast').replace(/[\r\n]+/g, ' ');
    await this.mailer.send({
      from: { name: sender, address: `no-reply@${domain}` },
      to: contact.email,
      returnPath: `no-reply@${domain}`,
      replyTo: null,
      subject: (subject ?? '').replace(/[\r\n]+/g, ' '),
      html,
      text: text ?? (html ? htmlToText(html) : scope.confirm_url),
      messageId: `<${c.id}.${c.attempts}@${domain}>`,
      headers: { 'Auto-Submitted': 'auto-generated' },
      dkim: key ? { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey } : null,
    });
  }
}

/**
 * The API reference's prose and examples of every feature (each feature's *.docs.ts, http/operation-docs.ts),
 * collected here, at the composition root, for buildApp to hand to the document: features never import one
 * another, and src/http never imports a feature. Every operation's tags, summary and description are in its
 * feature's *.docs.ts and nowhere else: route schemas carry none (lint refuses them).
 */
import { apiKeysDocs } from './access/api-keys/api-keys.docs.js';
import { automationsDocs } from './integrations/automations/automations.docs.js';
import { bouncesDocs } from './sending/bounces/bounces.docs.js';
import { broadcastsDocs } from './sending/broadcasts/broadcasts.docs.js';
import { contactsDocs } from './audience/contacts/contacts.docs.js';
import { bulkDocs } from './audience/bulk/bulk.docs.js';
import { documentsDocs } from './sending/documents/documents.docs.js';
import { domainsDocs } from './mail-setup/domains/domains.docs.js';
import { emailsDocs } from './sending/emails/emails.docs.js';
import { dmarcDocs } from './mail-setup/dmarc/dmarc.docs.js';
import { eventsDocs } from './outbox/events/events.docs.js';
import { auditDocs } from './outbox/audit/audit.docs.js';
import { formsDocs } from './forms/forms/forms.docs.js';
import { hostedDocs } from './forms/hosted/hosted.docs.js';
import { imagesDocs } from './mail-setup/images/images.docs.js';
import type { OperationDocs } from './http/operation-docs.js';
import { protectionDocs } from './forms/protection/protection.docs.js';
import { segmentsDocs } from './audience/segments/segments.docs.js';
import { submissionsDocs } from './forms/submissions/submissions.docs.js';
import { suppressionsDocs } from './audience/suppressions/suppressions.docs.js';
import { templatesDocs } from './mail-setup/templates/templates.docs.js';
import { topicsDocs } from './audience/topics/topics.docs.js';
import { trackingDocs } from './sending/tracking/tracking.docs.js';
import { unsubscribeDocs } from './sending/unsubscribe/unsubscribe.docs.js';
import { archiveDocs } from './sending/archive/archive.docs.js';
import { usersDocs } from './access/users/users.docs.js';
import { accountDocs } from './access/users/account.docs.js';
import { webhooksDocs } from './integrations/webhooks/webhooks.docs.js';
import { workspacesDocs } from './access/workspaces/workspaces.docs.js';

export const OPERATION_DOCS: readonly OperationDocs[] = [
  workspacesDocs,
  apiKeysDocs,
  formsDocs,
  submissionsDocs,
  hostedDocs,
  domainsDocs,
  dmarcDocs,
  contactsDocs,
  bulkDocs,
  topicsDocs,
  segmentsDocs,
  templatesDocs,
  imagesDocs,
  broadcastsDocs,
  emailsDocs,
  documentsDocs,
  suppressionsDocs,
  bouncesDocs,
  eventsDocs,
  webhooksDocs,
  automationsDocs,
  usersDocs,
  auditDocs,
  accountDocs,
  trackingDocs,
  unsubscribeDocs,
  archiveDocs,
  protectionDocs,
];

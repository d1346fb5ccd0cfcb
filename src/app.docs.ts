/**
 * The API reference's prose and examples of every feature (each feature's *.docs.ts, http/operation-docs.ts),
 * collected here, at the composition root, for buildApp to hand to the document: features never import one
 * another, and src/http never imports a feature.
 */
import { apiKeysDocs } from './api-keys/api-keys.docs.js';
import { automationsDocs } from './automations/automations.docs.js';
import { bouncesDocs } from './bounces/bounces.docs.js';
import { broadcastsDocs } from './broadcasts/broadcasts.docs.js';
import { contactsDocs } from './contacts/contacts.docs.js';
import { domainsDocs } from './domains/domains.docs.js';
import { eventsDocs } from './events/events.docs.js';
import { formsDocs } from './forms/forms.docs.js';
import { hostedDocs } from './hosted/hosted.docs.js';
import type { OperationDocs } from './http/operation-docs.js';
import { protectionDocs } from './protection/protection.docs.js';
import { segmentsDocs } from './segments/segments.docs.js';
import { submissionsDocs } from './submissions/submissions.docs.js';
import { suppressionsDocs } from './suppressions/suppressions.docs.js';
import { templatesDocs } from './templates/templates.docs.js';
import { topicsDocs } from './topics/topics.docs.js';
import { trackingDocs } from './tracking/tracking.docs.js';
import { unsubscribeDocs } from './unsubscribe/unsubscribe.docs.js';
import { usersDocs } from './users/users.docs.js';
import { webhooksDocs } from './webhooks/webhooks.docs.js';
import { workspacesDocs } from './workspaces/workspaces.docs.js';

export const OPERATION_DOCS: readonly OperationDocs[] = [
  workspacesDocs, apiKeysDocs, formsDocs, submissionsDocs, hostedDocs, domainsDocs, contactsDocs, topicsDocs, segmentsDocs,
  templatesDocs, broadcastsDocs, suppressionsDocs, bouncesDocs, eventsDocs, webhooksDocs, automationsDocs, usersDocs,
  trackingDocs, unsubscribeDocs, protectionDocs,
];

// The audience context's face (docs/architecture.md): what other contexts may use of contacts, segments, suppressions
// and topics. Writes go through published functions only: a contact's status and its address's suppression through
// the lifecycle (applyToAddress, applyToContact, signUp, confirm), its data through changeByAutomation, its topic
// subscriptions through setTopicChoices. The rest are reads.
export { contactEmail } from './contacts/contacts.email.js';
export {
  engagementKindOf,
  type EngagementNote,
  noteEngagement,
  recomputeEngagement,
} from './contacts/contacts.engagement.js';
export {
  applyToAddress,
  applyToContact,
  confirm,
  type HeldChanges,
  signUp,
  type SignUpFields,
} from './contacts/contacts.lifecycle.js';
export { CONTACT_COLUMNS, fillContactTimezone, getContact, toContactRecord } from './contacts/contacts.repository.js';
export { PROPERTY_KEY_PATTERN } from './contacts/contacts.schemas.js';
export { changeByAutomation } from './contacts/contacts.service.js';
export { setTopicChoices, topicsOfContacts } from './contacts/contacts.subscriptions.js';
export {
  audience,
  audienceIds,
  audiencePage,
  countAudience,
  type AudienceSpec,
  type ResendAudience,
} from './segments/audience.js';
export { type Filter, topicReferences, validateFilter } from './segments/segments.filter.js';
export { unknownFilterReferences } from './segments/segments.service.js';
export { FilterSchema } from './segments/segments.schemas.js';
export {
  contactMatches,
  getSegment,
  imaginedContactMatches,
  matchingContactIds,
} from './segments/segments.repository.js';
export { type IdRange, inRange, nextSlice } from './segments/slices.js';
export { suppressionsOf } from './suppressions/suppressions.repository.js';
export type { MessageSource, MessageSources } from './suppressions/suppressions.sources.js';
export { existingTopicIds, getTopic, listTopics } from './topics/topics.repository.js';

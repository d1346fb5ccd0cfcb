import { Type, type Static } from 'typebox';
import { ListQuery, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';

export const DEFAULT_SUBSCRIPTIONS = ['OPT_IN', 'OPT_OUT'] as const;
export type DefaultSubscription = (typeof DEFAULT_SUBSCRIPTIONS)[number];

const name = Type.String({ minLength: 1, maxLength: 200 });
const defaultSubscription = StringEnum(DEFAULT_SUBSCRIPTIONS, {
  description:
    'OPT_IN: contacts are subscribed unless they opt out; OPT_OUT: not subscribed unless they opt in. Fixed at creation.',
});

export const TopicSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  defaultSubscription,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const CreateTopicBody = Type.Object({ name, defaultSubscription }, { additionalProperties: false });
export type CreateTopicInput = Static<typeof CreateTopicBody>;

/**
 * Only the name can change. `defaultSubscription` is accepted when it equals the stored value (so a client
 * may send the whole object back) and is a 422 otherwise: contacts without an explicit choice rely on it.
 */
export const UpdateTopicBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.Optional(name),
    defaultSubscription: Type.Optional(defaultSubscription),
  },
  { additionalProperties: false },
);
export type UpdateTopicInput = Static<typeof UpdateTopicBody>;

export const TopicParams = Type.Object({ topicId: PathId });
export const TopicListQuery = ListQuery;

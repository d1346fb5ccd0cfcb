import fs from 'node:fs';
import { Type, type Static } from 'typebox';
import type * as TypeboxValue from 'typebox/value';
import { lazyRequire } from '../../lib/lazy.js';

// The validator loads only when SEND_PACING is set (lib/lazy.ts): the defaults need none.
const typeboxValue = lazyRequire<typeof TypeboxValue>('typebox/value');

/**
 * Pacing per receiving domain (docs/sending.md): the limits of each destination and how they adapt when a
 * destination says "try later". Read from SEND_PACING (JSON, or the path of a JSON file) over the defaults below.
 */

/** How fast one destination is sent to, by this process. */
export interface Limits {
  /** Messages in flight to the destination at once. */
  concurrency: number;
  /** Messages per second at most; 0: no limit until the destination throttles (then the rate seen is halved). */
  rate: number;
}

/** Additive increase, multiplicative decrease, shared by every destination. */
export interface Adaptive {
  /** The rate is multiplied by this on a throttle reply (once per round of messages sent at the old rate). */
  decrease: number;
  /** The rate never goes below this (messages per second). */
  minRate: number;
  /** After a throttle, nothing more goes to the destination for this long. */
  pauseMs: number;
  /** Each quiet period of this length (no throttle reply) adds `recoverStep` × the full rate back. */
  recoverEveryMs: number;
  recoverStep: number;
}

export interface GroupConfig extends Limits {
  /** MX host patterns: `*.google.com` (any host under google.com) or an exact host. */
  mx: string[];
  /** Recipient domains that belong to the group whatever their MX says (no lookup needed). */
  domains: string[];
}

export interface PacingConfig {
  /** Every destination no group claims: one per MX host (or per domain when the MX is unknown). */
  default: Limits;
  groups: Record<string, GroupConfig>;
  adaptive: Adaptive;
  /** How long an MX answer is kept; a failed lookup is kept `mxFailureCacheMs` (grouped by the domain meanwhile). */
  mxCacheMs: number;
  mxFailureCacheMs: number;
  /** How long a batch waits for MX answers before it groups the unanswered domains by themselves. */
  lookupBudgetMs: number;
  /** A delivery still waiting for its destination this long after it was queued fails (not a soft bounce). */
  giveUpAfterMs: number;
}

/**
 * The defaults: starting points, not published figures (no provider publishes one; they depend on the sender's
 * reputation). The adaptive part finds each destination's pace: a throttle halves it, quiet recovers it.
 */
export const DEFAULT_PACING: PacingConfig = {
  default: { concurrency: 20, rate: 0 },
  groups: {
    google: {
      mx: ['*.google.com', '*.googlemail.com'],
      domains: ['gmail.com', 'googlemail.com'],
      concurrency: 20,
      rate: 100,
    },
    microsoft: {
      mx: ['*.outlook.com', '*.protection.outlook.com', '*.hotmail.com'],
      domains: ['outlook.com', 'hotmail.com', 'live.com', 'msn.com'],
      concurrency: 10,
      rate: 50,
    },
    yahoo: {
      mx: ['*.yahoodns.net', '*.yahoo.com'],
      domains: ['yahoo.com', 'ymail.com', 'rocketmail.com', 'aol.com'],
      concurrency: 10,
      rate: 50,
    },
  },
  adaptive: { decrease: 0.5, minRate: 0.1, pauseMs: 5_000, recoverEveryMs: 30_000, recoverStep: 0.1 },
  mxCacheMs: 3_600_000,
  mxFailureCacheMs: 300_000,
  lookupBudgetMs: 2_000,
  giveUpAfterMs: 3 * 86_400_000,
};

const Rate = Type.Number({ minimum: 0, maximum: 1_000_000 });
const Concurrency = Type.Integer({ minimum: 1, maximum: 10_000 });
const Ms = Type.Integer({ minimum: 0, maximum: 365 * 86_400_000 });
const Host = Type.String({ pattern: '^(\\*\\.)?[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*\\.?$' });
const Strict = { additionalProperties: false } as const;

const PacingInput = Type.Object(
  {
    default: Type.Optional(Type.Object({ concurrency: Type.Optional(Concurrency), rate: Type.Optional(Rate) }, Strict)),
    groups: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }),
        Type.Object(
          {
            concurrency: Type.Optional(Concurrency),
            rate: Type.Optional(Rate),
            mx: Type.Optional(Type.Array(Host, { maxItems: 100 })),
            domains: Type.Optional(Type.Array(Host, { maxItems: 10_000 })),
          },
          Strict,
        ),
      ),
    ),
    adaptive: Type.Optional(
      Type.Object(
        {
          decrease: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
          minRate: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 })),
          pauseMs: Type.Optional(Ms),
          recoverEveryMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400_000 })),
          recoverStep: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
        },
        Strict,
      ),
    ),
    mxCacheMs: Type.Optional(Ms),
    mxFailureCacheMs: Type.Optional(Ms),
    lookupBudgetMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
    giveUpAfterMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 * 86_400_000 })),
  },
  Strict,
);

export type PacingInput = Static<typeof PacingInput>;

/** Why SEND_PACING cannot be used (config.ts makes it a ConfigError). */
export class PacingConfigError extends Error {}

/**
 * SEND_PACING: a JSON object (starting with `{`) or the path of a file holding one; unset or empty: the defaults.
 * Given values are laid over the defaults: a group of a built-in name changes its limits (and its `mx` and
 * `domains` when given), a new group needs `mx` or `domains`.
 */
export function parsePacing(raw: string | undefined): PacingConfig {
  if (raw === undefined || raw.trim() === '') return DEFAULT_PACING;
  let text = raw.trim();
  if (!text.startsWith('{')) {
    try {
      text = fs.readFileSync(text, 'utf8');
    } catch (err) {
      throw new PacingConfigError(`SEND_PACING is neither JSON nor a readable file: ${(err as Error).message}`);
    }
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    throw new PacingConfigError(`SEND_PACING is not valid JSON: ${(err as Error).message}`);
  }
  const errors = [...typeboxValue().Errors(PacingInput, input)].filter((e) => e.keyword !== 'boolean');
  if (errors.length) {
    throw new PacingConfigError(
      `SEND_PACING: ${errors
        .slice(0, 3)
        .map(
          (e) =>
            `${e.instancePath || '(top)'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperties: string[] }).additionalProperties.join(', ')})` : ''}`,
        )
        .join('; ')}`,
    );
  }
  return mergePacing(DEFAULT_PACING, input as PacingInput);
}

/** The given settings over `base` (see parsePacing). */
export function mergePacing(base: PacingConfig, input: PacingInput): PacingConfig {
  const def = { ...base.default, ...input.default };
  const groups: Record<string, GroupConfig> = { ...base.groups };
  for (const [name, g] of Object.entries(input.groups ?? {})) {
    const known = groups[name];
    if (!known && !g.mx?.length && !g.domains?.length)
      throw new PacingConfigError(
        `SEND_PACING: the group "${name}" needs "mx" patterns or "domains" (or the name of a built-in group: ${Object.keys(base.groups).join(', ')})`,
      );
    groups[name] = {
      concurrency: g.concurrency ?? known?.concurrency ?? def.concurrency,
      rate: g.rate ?? known?.rate ?? def.rate,
      mx: (g.mx ?? known?.mx ?? []).map(lower),
      domains: (g.domains ?? known?.domains ?? []).map(lower),
    };
  }
  return {
    default: def,
    groups,
    adaptive: { ...base.adaptive, ...input.adaptive },
    mxCacheMs: input.mxCacheMs ?? base.mxCacheMs,
    mxFailureCacheMs: input.mxFailureCacheMs ?? base.mxFailureCacheMs,
    lookupBudgetMs: input.lookupBudgetMs ?? base.lookupBudgetMs,
    giveUpAfterMs: input.giveUpAfterMs ?? base.giveUpAfterMs,
  };
}

const lower = (s: string) => s.toLowerCase().replace(/\.$/, '');

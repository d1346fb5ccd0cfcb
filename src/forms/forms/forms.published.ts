import type { Db } from '../../db/connection.js';
import { findPublishedBySlug, type PublishedForm } from './forms.repository.js';

/**
 * The PUBLISHED forms by public slug, kept in memory for the hosted pages, the embed script and every public
 * submission: during a spike each request read the form again (a join of two tables and the form's JSON columns
 * parsed: ~15% of a submission's CPU; bench/README.md, bench:submit).
 *
 * What a slug answers changes only when a version of its form is published (a PUBLISHED version is immutable; a
 * publish supersedes the previous one, and may move the slug). So: a publish in this process drops what this process
 * holds at once (publishedFormsChanged, called by FormsService after the publish committed), and an entry is read
 * again after PUBLISHED_FORM_TTL_MS, which bounds how long another process (a second server on the same PostgreSQL)
 * answers with the version it published before. Slugs without a published form are not kept (they would let anyone
 * fill the memory).
 */
export const PUBLISHED_FORM_TTL_MS = 1000;

let generation = 0;

/** A form was published in this process: every cache drops what it holds. */
export function publishedFormsChanged(): void {
  generation++;
}

export class PublishedForms {
  private readonly bySlug = new Map<string, { form: PublishedForm; at: number; generation: number }>();
  /** Lookups under way: the requests that find an entry expired together wait for one read. */
  private readonly reading = new Map<string, { promise: Promise<PublishedForm | undefined>; generation: number }>();

  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
    private readonly ttlMs = PUBLISHED_FORM_TTL_MS,
  ) {}

  /** The PUBLISHED form at this slug (any workspace); the same object for a while: treat it as read-only (it is frozen). */
  get(slug: string): Promise<PublishedForm | undefined> {
    const now = this.clock();
    const hit = this.bySlug.get(slug);
    if (hit && hit.generation === generation && now - hit.at < this.ttlMs) return Promise.resolve(hit.form);
    const pending = this.reading.get(slug);
    if (pending && pending.generation === generation) return pending.promise;
    const seen = generation;
    const promise = findPublishedBySlug(this.db.kysely, slug)
      .then((form) => {
        // Not kept when a publish committed while it was read: it may be the version before.
        if (form && seen === generation) this.bySlug.set(slug, { form: deepFreeze(form), at: now, generation: seen });
        else this.bySlug.delete(slug);
        return form;
      })
      .finally(() => {
        if (this.reading.get(slug)?.promise === promise) this.reading.delete(slug);
      });
    this.reading.set(slug, { promise, generation: seen });
    return promise;
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

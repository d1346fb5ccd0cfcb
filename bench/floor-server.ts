/**
 * The floor for bench/api.bench.ts: the database work Formcast's `PUT /v1/forms/{id}` must do, and nothing
 * else. A bare Fastify app (no schemas, no hooks, no logger) on Formcast's own SQLite file, opened with the
 * same pragmas, answering the same request with the same answer:
 *
 * - authenticate the bearer key: parse it, SHA-256 the secret, read the key's row by id, compare in constant
 *   time, refuse a revoked key;
 * - one `UPDATE forms … WHERE workspace_id AND id AND status = 'DRAFT' RETURNING <the form's columns>`, the
 *   statement Formcast runs, with prepared better-sqlite3 statements and no query builder, run to its end (so
 *   that the WAL is checkpointed as Formcast's is);
 * - answer the whole form as JSON (the API's Form object).
 *
 * No validation, no scope check, no lastUsedAt bookkeeping (Formcast writes it once a minute per key), no
 * request ids, no idempotency, no error bodies. It is not a Formcast that could ship; it shows how close to
 * the baseline any implementation of this endpoint can get on this machine, so that Formcast's figure can
 * be read against the work itself as well as against the baseline.
 *
 * Environment: DATABASE_URL (Formcast's SQLite file, required), PORT (default 0), HOST (default 127.0.0.1).
 * Prints `listening on http://HOST:PORT` on stdout once ready.
 */
import crypto from 'node:crypto';
import Fastify from 'fastify';
import { openDatabase, serveUntilSignal } from './bare-server.js';

const db = openDatabase('floor-server');

const findKey = db.prepare<[string], { workspace_id: string; key_hash: string; revoked_at: string | null }>(
  'select "workspace_id", "key_hash", "revoked_at" from "api_keys" where "id" = ?',
);

interface FormRow {
  id: string;
  form_group_id: string;
  version: number;
  status: string;
  name: string;
  description: string | null;
  type: string;
  display: string | null;
  field_mapping: string;
  settings: string;
  double_opt_in_email_id: string | null;
  seo_title: string | null;
  seo_description: string | null;
  seo_image_url: string | null;
  seo_favicon_url: string | null;
  slug: string | null;
  previous_version_id: string | null;
  html_validation: string | null;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  archived_at: string | null;
}

const update = db.prepare<[string, string | null, string, string, string], FormRow>(
  `update "forms" set "name" = ?, "seo_title" = ?, "updated_at" = ?
   where "workspace_id" = ? and "id" = ? and "status" = 'DRAFT'
   returning "id", "form_group_id", "version", "status", "name", "description", "type", "display", "field_mapping",
     "settings", "double_opt_in_email_id", "seo_title", "seo_description", "seo_image_url", "seo_favicon_url", "slug",
     "previous_version_id", "html_validation", "created_at", "updated_at", "published_at", "archived_at"`,
);

const KEY = /^Bearer fc_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{43})$/;
const NO_HASH = Buffer.alloc(32);

const app = Fastify({ logger: false });

app.put<{ Params: { id: string }; Body: { name?: unknown; seoTitle?: unknown } }>(
  '/v1/forms/:id',
  async (req, reply) => {
    const parts = KEY.exec(req.headers.authorization ?? '');
    if (!parts) return reply.code(401).send({ code: 'unauthorized' });
    const key = findKey.get(`key_${parts[1]}`);
    const presented = crypto.createHash('sha256').update(parts[2]!).digest();
    const equal = crypto.timingSafeEqual(presented, key ? Buffer.from(key.key_hash, 'hex') : NO_HASH);
    if (!key || !equal || key.revoked_at) return reply.code(401).send({ code: 'unauthorized' });

    const name = typeof req.body?.name === 'string' ? req.body.name : 'Bench';
    const seoTitle = typeof req.body?.seoTitle === 'string' ? req.body.seoTitle : null;
    // all(), not get(): get() resets the statement before SQLite's last step, and SQLite runs the WAL's auto-checkpoint
    // only from that step; with get() this process never checkpointed (its WAL grew without bound, the checkpoints
    // Formcast pays never came). all() runs the statement to its end, as Formcast's driver does.
    const f = update.all(name, seoTitle, new Date().toISOString(), key.workspace_id, req.params.id)[0];
    if (!f) return reply.code(404).send({ code: 'not_found' });
    return {
      id: f.id,
      name: f.name,
      description: f.description,
      type: f.type,
      display: f.display,
      fieldMapping: JSON.parse(f.field_mapping) as unknown,
      settings: JSON.parse(f.settings) as unknown,
      doubleOptInEmailId: f.double_opt_in_email_id,
      seoTitle: f.seo_title,
      seoDescription: f.seo_description,
      seoImageUrl: f.seo_image_url,
      seoFaviconUrl: f.seo_favicon_url,
      slug: f.slug,
      status: f.status,
      version: f.version,
      formGroupId: f.form_group_id,
      previousVersionId: f.previous_version_id,
      htmlValidation: f.html_validation === null ? null : (JSON.parse(f.html_validation) as unknown),
      createdAt: f.created_at,
      updatedAt: f.updated_at,
      publishedAt: f.published_at,
      archivedAt: f.archived_at,
    };
  },
);

await serveUntilSignal(app, db);

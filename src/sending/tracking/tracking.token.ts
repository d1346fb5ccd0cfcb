import crypto from 'node:crypto';
import { idFromBytes } from '../../lib/ids.js';

/**
 * Tracking tokens (docs/tracking.md): the last segment of `{PUBLIC_URL}/t/o/{token}` (the open pixel) and
 * `{PUBLIC_URL}/t/c/{token}` (a rewritten link). A token carries everything the hit needs to be recorded
 * without reading the database: the workspace, the delivery, the broadcast and the contact it was sent to,
 * the time the message was sent and, for a link, the link's place among the message's tracked links and the
 * URL itself (links in per-recipient Liquid output may differ per recipient, so the URL cannot be looked up).
 *
 * Binary layout, base64url without padding:
 *
 *   kind(1) ws(16) delivery(16) broadcast(16) flags(1: hasContact, isEmail) [contact(16)] sentAt(4, Unix seconds)
 *   [click: linkIndex(2) linkCount(2) url(utf-8, the rest)] mac(16)
 *
 * The ids are the 128 bits of their ULIDs (the prefixes are fixed by the kind of each field). The MAC is
 * HMAC-SHA256 with the server secret over a purpose label and every byte before it, truncated to 128 bits:
 * a token nobody signed, or one with a single bit changed, does not verify, and a click token cannot be made to
 * point anywhere else (no open redirect).
 *
 * Click tokens are now signed in two halves (kind 3; kind 2 above is still verified, for the mail already sent):
 *
 *   kind(3) ws delivery broadcast flags [contact] sentAt  linkIndex(2) linkCount(2) url  linkMac(16) messageMac(16)
 *
 * `messageMac` covers the message's ids (the same for its every link: one HMAC per message), `linkMac` covers the
 * broadcast (its 16 bytes and whether it is an email), the link's place and its URL (the same for every recipient of
 * a link without Liquid in it: one HMAC per link of a broadcast, kept in a small cache, not per message). Both must
 * verify. The URL is still bound to the broadcast that linked to it (no open redirect), and the link to the recipient
 * only as far as the halves of two tokens of one broadcast can be joined: a link part joined to another recipient's
 * message part records a click of that recipient on a link of that broadcast, which whoever holds that recipient's
 * message part (it is in every token of their message) could record by following their own link. A 40-block
 * newsletter has ~27 tracked links: ~27 HMACs a message became ~1 (docs/tracking.md, bench/README.md "bench:render").
 */

export const TOKEN_KIND = { open: 1, click: 2 } as const;
export type TokenKind = keyof typeof TOKEN_KIND;
/** A click token signed in two halves (above). */
const CLICK_SPLIT = 3;

const MAC_BYTES = 16;
const PURPOSE = Buffer.from('formcast-tracking-v1\0');
const MESSAGE_PURPOSE = Buffer.from('formcast-tracking-v2-message\0');
const LINK_PURPOSE = Buffer.from('formcast-tracking-v2-link\0');
/** Longer URLs are not rewritten (docs/tracking.md): the tracked address must stay a reasonable request line. */
export const MAX_TRACKED_URL = 2000;
/** The longest token a route accepts (a click with the longest URL), in characters. */
export const MAX_TOKEN_CHARS = Math.ceil(((1 + 16 * 4 + 1 + 4 + 4 + MAX_TRACKED_URL * 3 + 2 * MAC_BYTES) * 4) / 3);

export interface TrackingRef {
  workspaceId: string;
  deliveryId: string;
  broadcastId: string;
  contactId: string | null;
  /** When the message was sent (Unix seconds). */
  sentAt: number;
}

export interface ClickRef extends TrackingRef {
  /** The link's place among the message's tracked links (0-based), and how many the message has. */
  linkIndex: number;
  linkCount: number;
  url: string;
}

export type VerifiedToken = ({ kind: 'open' } & TrackingRef) | ({ kind: 'click' } & ClickRef);

const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const B32_VALUE = new Map([...B32].map((c, i) => [c, i]));
const ID = /^(ws|dlv|bc|ct|em)_([0-9A-HJKMNP-TV-Z]{26})$/;
/** The flags byte after the broadcast: bit 0, a contact follows; bit 1, the "broadcast" is a transactional email (`em_`). */
const HAS_CONTACT = 1;
const IS_EMAIL = 2;

/** The 16 bytes of a ULID (26 Crockford base32 characters: 130 bits, the first two always 0), written at `offset`. */
function writeUlid(ulid: string, out: Buffer, offset: number): void {
  let value = 0;
  let bits = -2; // the two leading bits of the first character are dropped
  let o = offset;
  for (let i = 0; i < 26; i++) {
    value = ((value << 5) | B32_VALUE.get(ulid[i]!)!) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >>> bits) & 0xff;
    }
  }
}

function ulidOf(id: string, prefix: 'ws' | 'dlv' | 'bc' | 'ct' | 'em'): string | null {
  const m = ID.exec(id);
  return m && m[1] === prefix ? m[2]! : null;
}

/** A broadcast's ULID, or a transactional email's (its hidden broadcast has the email's id: docs/emails.md). */
function broadcastUlid(id: string): string | null {
  return ulidOf(id, 'bc') ?? ulidOf(id, 'em');
}

function mac(secret: Buffer, body: Buffer, purpose = PURPOSE): Buffer {
  return crypto.createHmac('sha256', secret).update(purpose).update(body).digest().subarray(0, MAC_BYTES);
}

/** Where the broadcast's 16 bytes are in the packed ref (after the workspace and the delivery), and its flags byte. */
const BROADCAST_AT = 32;
const FLAGS_AT = 48;
const EMAIL_BYTE = Buffer.of(IS_EMAIL);
const BROADCAST_BYTE = Buffer.of(0);

/** The link half's MAC: the broadcast (16 bytes and the email flag), then the link part (index, count, URL). */
function linkMac(secret: Buffer, ref: Buffer, link: Buffer): Buffer {
  return crypto
    .createHmac('sha256', secret)
    .update(LINK_PURPOSE)
    .update(ref.subarray(BROADCAST_AT, BROADCAST_AT + 16))
    .update(ref[FLAGS_AT]! & IS_EMAIL ? EMAIL_BYTE : BROADCAST_BYTE)
    .update(link)
    .digest()
    .subarray(0, MAC_BYTES);
}

/**
 * Link halves already signed, per secret: a broadcast's links are the same for each of its recipients. Keyed by the
 * broadcast's bytes (its id and flags), then the link's URL, then its place (index and count); each entry is the link
 * part followed by its MAC, the token's bytes after the message's ids. Emptied when full (a send goes through a few
 * hundred links at most). The URL is the same string object message after message (tracking.template.ts reads each
 * `href` once), so its hash is computed once; a key made of the bytes per link and looked up cost ~0.15 µs a link.
 */
const LINK_CACHE_MAX = 4096;
interface LinkCache {
  size: number;
  byBroadcast: Map<string, Map<string, Map<number, Buffer>>>;
}
const linkMacs = new WeakMap<Buffer, LinkCache>();

/**
 * The bytes of a token between its kind and its click part (the ids, the flags, the time sent), or null when an id has
 * a shape tokens cannot carry. The same for every token of a message: tokenSigner packs them once.
 */
function refBytes(ref: TrackingRef): Buffer | null {
  const ws = ulidOf(ref.workspaceId, 'ws');
  const dlv = ulidOf(ref.deliveryId, 'dlv');
  const bc = broadcastUlid(ref.broadcastId);
  const ct = ref.contactId === null ? null : ulidOf(ref.contactId, 'ct');
  if (!ws || !dlv || !bc || (ref.contactId !== null && !ct)) return null;
  const buf = Buffer.allocUnsafe(48 + 1 + (ct ? 16 : 0) + 4);
  let o = 0;
  writeUlid(ws, buf, o);
  o += 16;
  writeUlid(dlv, buf, o);
  o += 16;
  writeUlid(bc, buf, o);
  o += 16;
  buf[o++] = (ct ? HAS_CONTACT : 0) | (ref.broadcastId.startsWith('em_') ? IS_EMAIL : 0);
  if (ct) {
    writeUlid(ct, buf, o);
    o += 16;
  }
  buf.writeUInt32BE(Math.max(0, Math.min(0xffffffff, Math.floor(ref.sentAt))), o);
  return buf;
}

/** The link part of a click token: its place, the message's link count, the URL. */
function linkPart(link: { linkIndex: number; linkCount: number; url: string }): Buffer {
  const urlBytes = Buffer.byteLength(link.url, 'utf8');
  const buf = Buffer.allocUnsafe(4 + urlBytes);
  buf.writeUInt16BE(Math.min(link.linkIndex, 0xffff), 0);
  buf.writeUInt16BE(Math.min(link.linkCount, 0xffff), 2);
  buf.write(link.url, 4, urlBytes, 'utf8');
  return buf;
}

/** A click token in two halves (kind 3): the message's MAC given, the link's from the cache or signed now. */
function signSplitClick(
  secret: Buffer,
  ref: Buffer,
  messageMac: Buffer,
  slot: LinkSlot,
  link: { linkIndex: number; linkCount: number; url: string },
): string {
  const { cache, links } = slot;
  const place = Math.min(link.linkIndex, 0xffff) * 0x10000 + Math.min(link.linkCount, 0xffff);
  let byPlace = links.get(link.url);
  let tail = byPlace?.get(place);
  if (!tail) {
    if (cache.size >= LINK_CACHE_MAX) {
      // (A link personalised per recipient fills it: one entry a message.)
      cache.byBroadcast.clear();
      links.clear();
      cache.byBroadcast.set(slot.key, links);
      cache.size = 0;
      byPlace = undefined;
    }
    if (!byPlace) links.set(link.url, (byPlace = new Map()));
    const part = linkPart(link);
    tail = Buffer.concat([part, linkMac(secret, ref, part)]);
    byPlace.set(place, tail);
    cache.size++;
  }
  const buf = Buffer.allocUnsafe(1 + ref.length + tail.length + MAC_BYTES);
  buf[0] = CLICK_SPLIT;
  let o = 1 + ref.copy(buf, 1);
  o += tail.copy(buf, o);
  messageMac.copy(buf, o);
  return buf.toString('base64url');
}

/** A secret's cache of link halves and its entries for one broadcast (found once a message). */
interface LinkSlot {
  cache: LinkCache;
  key: string;
  links: Map<string, Map<number, Buffer>>;
}

function linkCacheOf(secret: Buffer, ref: Buffer): LinkSlot {
  let cache = linkMacs.get(secret);
  if (!cache) linkMacs.set(secret, (cache = { size: 0, byBroadcast: new Map() }));
  const key = ref.toString('latin1', BROADCAST_AT, FLAGS_AT + 1);
  let links = cache.byBroadcast.get(key);
  if (!links) cache.byBroadcast.set(key, (links = new Map()));
  return { cache, key, links };
}

/** A token: the kind, the packed ref, the click part, the MAC over all of it. */
function signPacked(
  secret: Buffer,
  kind: TokenKind,
  ref: Buffer,
  click?: { linkIndex: number; linkCount: number; url: string },
): string {
  const urlBytes = click ? Buffer.byteLength(click.url, 'utf8') : 0;
  const size = 1 + ref.length + (click ? 4 + urlBytes : 0);
  const buf = Buffer.allocUnsafe(size + MAC_BYTES);
  buf[0] = TOKEN_KIND[kind];
  ref.copy(buf, 1);
  let o = 1 + ref.length;
  if (click) {
    buf.writeUInt16BE(Math.min(click.linkIndex, 0xffff), o);
    o += 2;
    buf.writeUInt16BE(Math.min(click.linkCount, 0xffff), o);
    o += 2;
    o += buf.write(click.url, o, urlBytes, 'utf8');
  }
  mac(secret, buf.subarray(0, o)).copy(buf, o);
  return buf.toString('base64url');
}

function packed(ref: TrackingRef): Buffer {
  const bytes = refBytes(ref);
  if (!bytes) throw new Error('tracking token: an id has an unexpected shape');
  return bytes;
}

export function signOpenToken(secret: Buffer, ref: TrackingRef): string {
  return signPacked(secret, 'open', packed(ref));
}

export function signClickToken(
  secret: Buffer,
  ref: TrackingRef,
  link: { linkIndex: number; linkCount: number; url: string },
): string {
  const bytes = packed(ref);
  return signSplitClick(secret, bytes, mac(secret, bytes, MESSAGE_PURPOSE), linkCacheOf(secret, bytes), link);
}

/** A click token as messages sent before the split carry it (kind 2, one MAC over all): still verified; for tests. */
export function signWholeClickToken(
  secret: Buffer,
  ref: TrackingRef,
  link: { linkIndex: number; linkCount: number; url: string },
): string {
  return signPacked(secret, 'click', packed(ref), link);
}

/**
 * One message's tokens (its pixel and each tracked link): the same as signOpenToken and signClickToken, the ids read
 * and packed once per message instead of once per token (a 40-block newsletter carries ~30 tracked links; per token,
 * reading the four ids cost more than the MAC). Null when an id has a shape tokens cannot carry.
 */
export function tokenSigner(
  secret: Buffer,
  ref: TrackingRef,
): { open: () => string; click: (link: { linkIndex: number; linkCount: number; url: string }) => string } | null {
  const bytes = refBytes(ref);
  if (!bytes) return null;
  let messageMac: Buffer | undefined;
  let slot: LinkSlot | undefined;
  return {
    open: () => signPacked(secret, 'open', bytes),
    click: (link) => {
      messageMac ??= mac(secret, bytes, MESSAGE_PURPOSE);
      slot ??= linkCacheOf(secret, bytes);
      return signSplitClick(secret, bytes, messageMac, slot, link);
    },
  };
}

const TOKEN_CHARS = /^[A-Za-z0-9_-]+$/;
const MIN_TOKEN_BYTES = 1 + 48 + 1 + 4 + MAC_BYTES;
const MIN_SPLIT_BYTES = 1 + 48 + 1 + 4 + 4 + 2 * MAC_BYTES;

/**
 * The hit a token names, or null when it does not verify (bad characters, not canonical base64url, too short,
 * a wrong MAC, the wrong kind, a click URL that is not http(s)). Constant-time MAC comparison.
 */
export function verifyTrackingToken(
  secret: Buffer,
  token: string,
  expected: 'open',
): ({ kind: 'open' } & TrackingRef) | null;
export function verifyTrackingToken(
  secret: Buffer,
  token: string,
  expected: 'click',
): ({ kind: 'click' } & ClickRef) | null;
export function verifyTrackingToken(secret: Buffer, token: string, expected: TokenKind): VerifiedToken | null {
  if (token.length < Math.ceil((MIN_TOKEN_BYTES * 4) / 3) || token.length > MAX_TOKEN_CHARS || !TOKEN_CHARS.test(token))
    return null;
  const buf = Buffer.from(token, 'base64url');
  // Only the canonical encoding of a payload is accepted (base64url decoding ignores stray trailing bits).
  if (buf.length < MIN_TOKEN_BYTES || buf.toString('base64url') !== token) return null;
  if (buf[0] === CLICK_SPLIT) return expected === 'click' ? verifySplitClick(secret, buf) : null;
  const body = buf.subarray(0, buf.length - MAC_BYTES);
  if (!crypto.timingSafeEqual(mac(secret, body), buf.subarray(buf.length - MAC_BYTES))) return null;
  if (body[0] !== TOKEN_KIND[expected]) return null;
  return readVerified(body, expected);
}

/** A click token in two halves: both MACs verified (constant time) before anything is read from it. */
function verifySplitClick(secret: Buffer, buf: Buffer): ({ kind: 'click' } & ClickRef) | null {
  if (buf.length < MIN_SPLIT_BYTES) return null;
  const flags = buf[1 + FLAGS_AT]!;
  if (flags > (HAS_CONTACT | IS_EMAIL)) return null;
  const refLength = FLAGS_AT + 1 + (flags & HAS_CONTACT ? 16 : 0) + 4;
  const body = buf.subarray(0, buf.length - 2 * MAC_BYTES);
  if (body.length < 1 + refLength + 4) return null;
  const ref = body.subarray(1, 1 + refLength);
  const link = body.subarray(1 + refLength);
  const linkOk = crypto.timingSafeEqual(linkMac(secret, ref, link), buf.subarray(body.length, body.length + MAC_BYTES));
  const messageOk = crypto.timingSafeEqual(
    mac(secret, ref, MESSAGE_PURPOSE),
    buf.subarray(body.length + MAC_BYTES, body.length + 2 * MAC_BYTES),
  );
  if (!linkOk || !messageOk) return null;
  return readVerified(body, 'click') as ({ kind: 'click' } & ClickRef) | null;
}

/** What a verified token's body (its kind, ref and link part, without MACs) names. */
function readVerified(body: Buffer, expected: TokenKind): VerifiedToken | null {
  let o = 1;
  const workspaceId = idFromBytes('ws_', body, o);
  o += 16;
  const deliveryId = idFromBytes('dlv_', body, o);
  o += 16;
  const broadcastAt = o;
  o += 16;
  const flags = body[o++]!;
  if (flags > (HAS_CONTACT | IS_EMAIL)) return null;
  const hasContact = (flags & HAS_CONTACT) !== 0;
  const broadcastId = idFromBytes(flags & IS_EMAIL ? 'em_' : 'bc_', body, broadcastAt);
  if (body.length < o + (hasContact ? 16 : 0) + 4) return null;
  const contactId = hasContact ? idFromBytes('ct_', body, o) : null;
  if (hasContact) o += 16;
  const sentAt = body.readUInt32BE(o);
  o += 4;
  const ref: TrackingRef = { workspaceId, deliveryId, broadcastId, contactId, sentAt };
  if (expected === 'open') return o === body.length ? { kind: 'open', ...ref } : null;
  if (body.length < o + 4) return null;
  const linkIndex = body.readUInt16BE(o);
  const linkCount = body.readUInt16BE(o + 2);
  const url = body.subarray(o + 4).toString('utf8');
  if (!/^https?:\/\//i.test(url)) return null;
  return { kind: 'click', ...ref, linkIndex, linkCount, url };
}

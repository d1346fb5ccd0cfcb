/**
 * Who fetched a pixel or followed a link: a reader, or a machine (docs/tracking.md, "Machine opens and
 * clicks"). Pure functions of the request (user agent, client address, method, time) and of the token; the one
 * rule that needs memory (several links of a message clicked within seconds) is `ClickBursts` below, which
 * keeps recent clicks per delivery in this process. Every rule has a `reason`, stored with the event.
 */

export type MachineReason =
  | 'apple_mpp' // Apple Mail Privacy Protection fetched the images when the message arrived
  | 'scanner' // a security scanner or link checker, by its user agent
  | 'no_user_agent' // no mail client or browser sends none
  | 'head_request' // a HEAD: link checkers look, people do not
  | 'before_read' // a click sooner after sending than anyone could have read the message
  | 'burst'; // several links of one message clicked within seconds

export interface Verdict {
  machine: boolean;
  reason?: MachineReason;
}

export const HUMAN: Verdict = { machine: false };

/** A click this soon after the message was sent is a scanner's (seconds). */
export const BEFORE_READ_SECONDS = 10;
/** Clicks of one message within this window are weighed together (ms). */
export const BURST_WINDOW_MS = 5000;
/** Distinct links of one message clicked within the window that make it a machine's (or all of them, if fewer). */
export const BURST_LINKS = 3;
/** Clicks of one message remembered within the window at most. */
const MAX_REMEMBERED = 32;
/** Stored user agents are cut to this many characters. */
export const MAX_USER_AGENT = 256;

/**
 * Image proxies that fetch when the reader opens the message: Gmail's (GoogleImageProxy, via ggpht.com),
 * Outlook.com's and Office 365's, Yahoo's. Their opens are human.
 */
const READER_PROXIES =
  /GoogleImageProxy|ggpht\.com|YahooMailProxy|Outlook-iOS|Outlook-Android|Microsoft Outlook|ms-office|MSOffice|Office\/\d|OneOutlook/i;

/**
 * Security scanners, link checkers and HTTP libraries: the gateways that fetch every link and image of a
 * message before (or instead of) its reader. Microsoft Defender's Safe Links previews as BingPreview.
 */
const SCANNERS = new RegExp(
  [
    'Barracuda',
    'Mimecast',
    'Proofpoint',
    'Symantec',
    'MessageLabs',
    'Forcepoint',
    'Sophos',
    'TrendMicro',
    'Trend Micro',
    'FireEye',
    'Trellix',
    'Cisco',
    'IronPort',
    'Zscaler',
    'Avanan',
    'Check ?Point',
    'Fortinet',
    'FortiGuard',
    'Kaspersky',
    'McAfee',
    'SpamTitan',
    'Hornetsecurity',
    'Vade',
    'Abnormal',
    'Darktrace',
    'Ironscales',
    'SafeLinks',
    'Safe Links',
    'BingPreview',
    'bingbot',
    'Googlebot',
    'AdsBot',
    'facebookexternalhit',
    'Slackbot',
    'LinkedInBot',
    'Twitterbot',
    'python-requests',
    'python-urllib',
    'aiohttp',
    'Go-http-client',
    'curl/',
    'Wget',
    'libwww-perl',
    'okhttp',
    'Java/',
    'Apache-HttpClient',
    'axios',
    'node-fetch',
    'undici',
    'HeadlessChrome',
    'PhantomJS',
    'Scrapy',
    'bot\\b',
    'crawler',
    'spider',
  ].join('|'),
  'i',
);

/** Apple's network, 17.0.0.0/8, from which Mail Privacy Protection fetches (also as an IPv4-mapped IPv6 address). */
export function isAppleAddress(ip: string | undefined): boolean {
  if (!ip) return false;
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return v4.startsWith('17.') && /^17\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export interface Hit {
  userAgent: string | undefined;
  ip: string | undefined;
  method: string;
}

function byAgent(ua: string): Verdict | null {
  if (READER_PROXIES.test(ua)) return HUMAN;
  if (SCANNERS.test(ua)) return { machine: true, reason: 'scanner' };
  return null;
}

/**
 * An open (the pixel was fetched). Apple MPP: the user agent is exactly `Mozilla/5.0`, or the request comes
 * from 17.0.0.0/8. Gmail's, Outlook's and Yahoo's image proxies are readers; known scanners and libraries,
 * a missing user agent and HEAD are machines; anything else is a reader.
 */
export function classifyOpen(hit: Hit): Verdict {
  const ua = hit.userAgent?.trim() ?? '';
  if (ua === 'Mozilla/5.0' || isAppleAddress(hit.ip)) return { machine: true, reason: 'apple_mpp' };
  if (!ua) return { machine: true, reason: 'no_user_agent' };
  const agent = byAgent(ua);
  if (agent) return agent;
  if (hit.method === 'HEAD') return { machine: true, reason: 'head_request' };
  return HUMAN;
}

/**
 * A click, on its own: known scanners, a missing user agent, HEAD, and any click within BEFORE_READ_SECONDS
 * of sending are machines. (Apple's address range is not a rule for clicks: people click from Apple's
 * network too.) The burst rule is ClickBursts'.
 */
export function classifyClick(hit: Hit, sentAtSeconds: number, nowMs: number): Verdict {
  const ua = hit.userAgent?.trim() ?? '';
  if (!ua) return { machine: true, reason: 'no_user_agent' };
  const agent = byAgent(ua);
  if (agent?.machine) return agent;
  if (hit.method === 'HEAD') return { machine: true, reason: 'head_request' };
  if (nowMs - sentAtSeconds * 1000 < BEFORE_READ_SECONDS * 1000) return { machine: true, reason: 'before_read' };
  return HUMAN;
}

export function truncateUserAgent(ua: string | undefined): string | null {
  if (!ua) return null;
  return ua.length > MAX_USER_AGENT ? ua.slice(0, MAX_USER_AGENT) : ua;
}

/** One click remembered by ClickBursts; `ref` is what the caller needs to mark it a machine's later. */
export interface RememberedClick<T> {
  linkIndex: number;
  at: number;
  machine: boolean;
  ref: T;
}

/**
 * The burst rule: within BURST_WINDOW_MS, BURST_LINKS distinct links of one message clicked, or every link of a
 * message that has at least two, make all those clicks a machine's, the earlier ones included (`add` returns
 * them, for the caller to update). Memory: the clicks of the last window, per delivery, in one Map in insertion
 * order, so expired entries are dropped from its front; at most `maxDeliveries` deliveries are remembered.
 * Per process: with several processes behind a load balancer, a burst split between them may go unseen.
 */
export class ClickBursts<T> {
  private readonly recent = new Map<string, RememberedClick<T>[]>();

  constructor(private readonly maxDeliveries = 100_000) {}

  /**
   * Remembers a click and says whether it completes (or continues) a burst; `earlier` lists the clicks of the
   * window not yet marked as a machine's, which the caller must now mark.
   */
  add(
    deliveryId: string,
    linkIndex: number,
    linkCount: number,
    at: number,
    ref: T,
    machine: boolean,
  ): { burst: boolean; earlier: RememberedClick<T>[] } {
    this.expire(at);
    // The message's clicks of the window, updated in place (a tracking hit's garbage is what the server's GC spends
    // its time on: bench/README.md, bench:track "Allocation"). At most the last MAX_REMEMBERED clicks before this one:
    // far more than any person makes within the window.
    let window = this.recent.get(deliveryId);
    if (window) {
      let kept = 0;
      for (const c of window) if (at - c.at <= BURST_WINDOW_MS) window[kept++] = c;
      window.length = kept;
      if (kept > MAX_REMEMBERED) window.splice(0, kept - MAX_REMEMBERED);
      this.recent.delete(deliveryId); // re-inserted at the end: the Map stays ordered by last click
    } else window = [];
    const previous = window.length;
    window.push({ linkIndex, at, machine, ref });
    this.recent.set(deliveryId, window);
    if (this.recent.size > this.maxDeliveries) this.recent.delete(this.recent.keys().next().value!);
    let distinct = 0;
    for (let i = 0; i < window.length; i++) {
      let j = 0;
      while (j < i && window[j]!.linkIndex !== window[i]!.linkIndex) j++;
      if (j === i) distinct++;
    }
    const burst = distinct >= BURST_LINKS || (linkCount >= 2 && distinct >= linkCount);
    if (!burst) return { burst, earlier: [] };
    const earlier: RememberedClick<T>[] = [];
    for (let i = 0; i < previous; i++) if (!window[i]!.machine) earlier.push(window[i]!);
    for (const c of window) c.machine = true;
    return { burst, earlier };
  }

  private expire(now: number): void {
    for (const [id, clicks] of this.recent) {
      if (now - clicks[clicks.length - 1]!.at <= BURST_WINDOW_MS) break;
      this.recent.delete(id);
    }
  }

  get size(): number {
    return this.recent.size;
  }
}

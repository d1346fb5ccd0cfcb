import dns2 from 'dns2';

const { Packet } = dns2;
/** RFC 1035 response codes (dns2 has Packet.RCODE at run time, not in its typings). */
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 };

/** What the server answers; a test changes the maps and sets as it goes (names in lower case). */
export interface Zone {
  /** name → TXT records, each as the character-strings it is split into. */
  txt: Map<string, string[][]>;
  /** name → MX exchanges, in order of preference. */
  mx: Map<string, string[]>;
  /** name → the name it is an alias of (CNAME). */
  cname: Map<string, string>;
  /** IP address → the names its reverse zone gives (PTR; asked as `<reversed>.in-addr.arpa` or `ip6.arpa`). */
  ptr: Map<string, string[]>;
  /** name → its IPv4 addresses (A). */
  a: Map<string, string[]>;
  /** Names the server never answers (a per-record timeout). */
  silent: Set<string>;
  /** Names answered with SERVFAIL. */
  servfail: Set<string>;
}

/**
 * A real DNS server on loopback (dns2 over UDP, plus TCP on the same port in case an answer is truncated and the
 * resolver retries over TCP) serving `zone`; any other name is NXDOMAIN. `address` is `127.0.0.1:port`, as
 * DNS_SERVERS takes it.
 */
export async function startDnsServer(
  zone: Partial<Zone> = {},
): Promise<Zone & { address: string; close(): Promise<void> }> {
  const z: Zone = {
    txt: zone.txt ?? new Map(),
    mx: zone.mx ?? new Map(),
    cname: zone.cname ?? new Map(),
    ptr: zone.ptr ?? new Map(),
    a: zone.a ?? new Map(),
    silent: zone.silent ?? new Set(),
    servfail: zone.servfail ?? new Set(),
  };
  const handle: Parameters<typeof dns2.createServer>[0]['handle'] = (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    const question = request.questions[0];
    const name = (question?.name ?? '').toLowerCase();
    if (z.silent.has(name)) return;
    const records = z.txt.get(name);
    const exchanges = z.mx.get(name);
    const alias = z.cname.get(name);
    const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\.in-addr\.arpa$/.exec(name);
    const reverse = v4 ? z.ptr.get([v4[4], v4[3], v4[2], v4[1]].join('.')) : undefined;
    const addresses = z.a.get(name);
    const answer = (type: number, data: Record<string, unknown>) =>
      response.answers.push({ name: question!.name, type, class: Packet.CLASS.IN, ttl: 60, ...data } as never);
    if (z.servfail.has(name)) response.header.rcode = RCODE.SERVFAIL;
    else if (alias !== undefined) {
      // An alias answers every type with its CNAME (a resolver follows it); the target's records follow when known.
      answer(Packet.TYPE.CNAME, { domain: alias });
      if (question?.type === Packet.TYPE.TXT)
        for (const data of z.txt.get(alias.toLowerCase()) ?? []) answer(Packet.TYPE.TXT, { name: alias, data });
    } else if (reverse) {
      if (question?.type === Packet.TYPE.PTR) for (const domain of reverse) answer(Packet.TYPE.PTR, { domain });
    } else if (addresses) {
      if (question?.type === Packet.TYPE.A) for (const address of addresses) answer(Packet.TYPE.A, { address });
    } else if (!records && !exchanges) response.header.rcode = RCODE.NXDOMAIN;
    else if (question?.type === Packet.TYPE.TXT) {
      for (const data of records ?? [])
        response.answers.push({
          name: question.name,
          type: Packet.TYPE.TXT,
          class: Packet.CLASS.IN,
          ttl: 60,
          data,
        } as never);
    } else if (question?.type === Packet.TYPE.MX) {
      exchanges?.forEach((exchange, i) =>
        response.answers.push({
          name: question.name,
          type: Packet.TYPE.MX,
          class: Packet.CLASS.IN,
          ttl: 60,
          priority: 10 + i,
          exchange,
        } as never),
      );
    }
    void send(response);
  };
  // The UDP port is free for UDP only: another test's TCP listener may hold the same number (EADDRINUSE, which failed a
  // CI run). Then both are closed and another port is tried.
  for (let attempt = 1; ; attempt++) {
    const udpServer = dns2.createServer({ udp: true, handle });
    const tcpServer = dns2.createServer({ tcp: true, handle });
    const { udp } = await udpServer.listen({ udp: { port: 0, address: '127.0.0.1' } });
    const failed = await new Promise<(Error & { code?: string }) | null>((resolve) => {
      tcpServer.once('error', resolve);
      void tcpServer.listen({ tcp: { port: udp!.port, address: '127.0.0.1' } }).then(() => resolve(null));
    });
    const close = () =>
      Promise.race([
        Promise.all([udpServer.close(), tcpServer.close()]).then(() => {}),
        new Promise<void>((r) => setTimeout(r, 500)),
      ]);
    if (!failed) {
      // The TCP side waits for idle client connections; do not hold the run for it.
      return { ...z, address: `127.0.0.1:${udp!.port}`, close };
    }
    udpServer.close();
    if (failed.code !== 'EADDRINUSE' || attempt >= 20) throw failed;
  }
}

import type { AddressInfo } from 'node:net';
import type { SMTPServer } from 'smtp-server';

/** A listening SMTP server: the port it got (0 asks for any) and how to stop it. */
export interface ListeningSmtp {
  port: number;
  close(): Promise<void>;
}

/**
 * Starts an smtp-server listening on host:port: its later errors go to `onError` (a client's misbehaviour never
 * ends the process); one while binding (the port is taken) rejects.
 */
export async function listenSmtp(
  server: SMTPServer,
  port: number,
  host: string,
  onError: (err: Error) => void,
): Promise<ListeningSmtp> {
  server.on('error', onError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

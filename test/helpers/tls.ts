import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SelfSigned {
  /** The folder holding cert.pem and key.pem (tests may put other files there). */
  dir: string;
  certPath: string;
  keyPath: string;
  /** PEM texts. */
  cert: string;
  key: string;
}

/**
 * A self-signed certificate and its key, made with the `openssl` command (valid two days) in a new temporary folder:
 * `subject` like `/CN=localhost`, `altNames` like `DNS:localhost,IP:127.0.0.1`. Throws when openssl is missing.
 */
export function selfSigned(opts: { subject: string; altNames?: string; key?: 'rsa' | 'ec' }): SelfSigned {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-cert-'));
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  const key =
    opts.key === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048'];
  const alt = opts.altNames ? ['-addext', `subjectAltName=${opts.altNames}`] : [];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...key,
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      opts.subject,
      ...alt,
    ],
    { stdio: 'ignore' },
  );
  return { dir, certPath, keyPath, cert: fs.readFileSync(certPath, 'utf8'), key: fs.readFileSync(keyPath, 'utf8') };
}

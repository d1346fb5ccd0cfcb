/**
 * The baseline of `npm run bench:track`: a bare Fastify app (no logger, no hooks, no schemas) answering
 * GET /t/o/* with the same 43-byte GIF and headers as Formcast, and GET /t/c/* with a 302 to a fixed URL.
 * No token check, no classification, no database: the cost of one HTTP round trip on this machine.
 */
import Fastify from 'fastify';

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const app = Fastify({ logger: false });

app.get('/t/o/*', (_req, reply) =>
  reply
    .code(200)
    .header('content-type', 'image/gif')
    .header('cache-control', 'no-store, max-age=0')
    .header('pragma', 'no-cache')
    .header('expires', '0')
    .header('x-content-type-options', 'nosniff')
    .send(GIF),
);
app.get('/t/c/*', (_req, reply) =>
  reply
    .code(302)
    .header('location', 'https://shop.example/sale?who=R0&x=1')
    .header('cache-control', 'no-store, max-age=0')
    .header('referrer-policy', 'no-referrer')
    .send(),
);

const host = process.env.HOST || '127.0.0.1';
await app.listen({ port: Number(process.env.PORT || 0), host });
const address = app.server.address();
process.stdout.write(`listening on http://${host}:${typeof address === 'object' && address ? address.port : 0}\n`);
const stop = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

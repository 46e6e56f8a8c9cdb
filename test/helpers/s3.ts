/**
 * The S3 server of the tests: Ceph RGW (a throwaway single-node cluster, scripts/lib/ceph.ts)
 * where Debian's Ceph packages are installed, else s3rver, a fake for tests that lacks parts of
 * the protocol (three operations are answered in front of it: test/helpers/s3rver-front.ts). PACTUM_TEST_S3=ceph insists on Ceph (CI sets
 * it, so a missing package fails instead of quietly testing against the fake); =s3rver insists
 * on s3rver.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { startS3, type TestS3 } from './s3rver-front.js';
import { cephInstalled, cephVersion, startCeph, startGateway, type Gateway } from '../../scripts/lib/ceph.js';

export interface TestS3Server {
  kind: 'ceph-rgw' | 's3rver';
  /** For the test output: "Ceph RGW 16.2.15" or "s3rver (…)". */
  label: string;
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Ceph only: the cluster's ceph.conf, from which another process starts a gateway of its own. */
  cephConf: string | null;
  createBucket(name: string): Promise<void>;
  /**
   * An endpoint of its own on the same storage, which a test may take away and bring back
   * without disturbing others: a second radosgw of the cluster, or a second s3rver on the same
   * files.
   */
  ownGateway(): Promise<OwnGateway>;
  close(): Promise<void>;
}

export interface OwnGateway {
  endpoint: string;
  /** Takes the gateway away: killed with SIGKILL (Ceph), or closed with its connections cut (s3rver). */
  kill(): Promise<void>;
  /** Brings it back on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function chosenS3Kind(): TestS3Server['kind'] {
  const wanted = process.env.PACTUM_TEST_S3;
  if (wanted === 's3rver') return 's3rver';
  if (wanted === 'ceph') {
    if (!cephInstalled()) throw new Error('PACTUM_TEST_S3=ceph, but the Ceph packages are not installed (apt-get install ceph-mon ceph-osd radosgw ceph-common)');
    return 'ceph-rgw';
  }
  if (wanted) throw new Error(`PACTUM_TEST_S3=${wanted}: expected ceph or s3rver`);
  return cephInstalled() ? 'ceph-rgw' : 's3rver';
}

/** An SDK client for the test server, with the checksum settings every S3 server here accepts. */
export const sdkClient = (s: { endpoint: string; accessKeyId: string; secretAccessKey: string }) =>
  new S3Client({
    region: 'us-east-1',
    endpoint: s.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

async function createBucket(s: TestS3Server, Bucket: string) {
  const client = sdkClient(s);
  try {
    await client.send(new CreateBucketCommand({ Bucket }));
  } finally {
    client.destroy();
  }
}

/** A Ceph cluster as a TestS3Server; `close` stops it (or not, when it belongs to someone else). */
function cephServer(c: { conf: string; endpoint: string; accessKeyId: string; secretAccessKey: string; close: () => Promise<void> }): TestS3Server {
  const server: TestS3Server = {
    kind: 'ceph-rgw',
    label: `Ceph RGW ${cephVersion() ?? ''}`.trim(),
    endpoint: c.endpoint,
    accessKeyId: c.accessKeyId,
    secretAccessKey: c.secretAccessKey,
    cephConf: c.conf,
    createBucket: (name) => createBucket(server, name),
    async ownGateway() {
      let g: Gateway | null = await startGateway(c.conf);
      const port = Number(new URL(g.endpoint).port);
      return {
        endpoint: g.endpoint,
        async kill() {
          await g?.stop(true);
          g = null;
        },
        async restart() {
          g = await startGateway(c.conf, `own${port}`, port);
        },
        async close() {
          await g?.stop();
          g = null;
        },
      };
    },
    close: c.close,
  };
  return server;
}

function s3rverServer(front: TestS3): TestS3Server {
  const dir = front.dir;
  const server: TestS3Server = {
    kind: 's3rver',
    label: 's3rver (a fake for tests; install Ceph for a real S3 server)',
    endpoint: front.endpoint,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    cephConf: null,
    createBucket: (name) => createBucket(server, name),
    async ownGateway() {
      const start = async (p: number) => {
        const own = new S3rver({ port: p, address: '127.0.0.1', silent: true, directory: dir });
        return { own, port: ((await own.run()) as { port: number }).port };
      };
      let { own, port: ownPort } = await start(0);
      let up = true;
      const stop = async () => {
        if (!up) return;
        up = false;
        (own as unknown as { httpServer: { closeAllConnections(): void } }).httpServer.closeAllConnections();
        await own.close();
      };
      return {
        endpoint: `http://127.0.0.1:${ownPort}`,
        kill: stop,
        async restart() {
          ({ own, port: ownPort } = await start(ownPort));
          up = true;
        },
        close: stop,
      };
    },
    close: () => front.close(),
  };
  return server;
}

/** Starts the S3 server the environment selects (see above). */
export async function startTestS3Server({ memBytes = 6 * 2 ** 30 } = {}): Promise<TestS3Server> {
  if (chosenS3Kind() === 'ceph-rgw') {
    const cluster = await startCeph({ memBytes });
    return cephServer({ ...cluster, endpoint: cluster.gateway.endpoint, close: () => cluster.stop() });
  }
  return s3rverServer(await startS3('pactum-unused'));
}

/**
 * The S3 server for one test file: the Ceph cluster that test/global-setup.ts started, when there
 * is one (gateways of its own come from that cluster), else one of its own.
 */
export async function testS3ForFile(): Promise<TestS3Server> {
  const conf = process.env.PACTUM_TEST_CEPH_CONF;
  if (!conf || process.env.PACTUM_TEST_S3_KIND !== 'ceph-rgw') return startTestS3Server({ memBytes: 2 * 2 ** 30 });
  return cephServer({
    conf,
    endpoint: process.env.PACTUM_TEST_S3_ENDPOINT!,
    accessKeyId: process.env.PACTUM_TEST_S3_KEY!,
    secretAccessKey: process.env.PACTUM_TEST_S3_SECRET!,
    close: async () => {}, // the run's: global-setup stops it
  });
}

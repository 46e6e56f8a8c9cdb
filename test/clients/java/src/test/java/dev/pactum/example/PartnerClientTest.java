package dev.pactum.example;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.pactum.client.ApiClient;
import dev.pactum.client.ApiException;
import dev.pactum.client.api.BatchApi;
import dev.pactum.client.api.LocksApi;
import dev.pactum.client.api.ObjectsApi;
import dev.pactum.client.api.TransferApi;
import dev.pactum.client.model.BatchObject;
import dev.pactum.client.model.BatchRequest;
import dev.pactum.client.model.BatchResponse;
import dev.pactum.client.model.LegacyObject;
import dev.pactum.client.model.LegacyObjectRequest;
import dev.pactum.client.model.Link;
import dev.pactum.client.model.LockCreateRequest;
import dev.pactum.client.model.LockList;
import dev.pactum.client.model.LockResponse;
import dev.pactum.client.model.ObjectSpec;
import dev.pactum.client.model.VerifyRequest;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A partner's use of the generated Java client against a live pactum: the batch API (negotiate,
 * upload, download, bytes compared), the legacy API (announce, upload, verify, read back) and
 * locks. The server, its user and repository come from PACTUM_URL, PACTUM_ORG, PACTUM_REPO,
 * PACTUM_USER and PACTUM_PASSWORD.
 */
class PartnerClientTest {
  static final String URL = env("PACTUM_URL");
  static final String ORG = env("PACTUM_ORG");
  static final String REPO = env("PACTUM_REPO");

  static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) throw new IllegalStateException(name + " is not set: run this through test/clients/java.test.ts");
    return value;
  }

  /** The user's client: HTTP Basic with the user's password (or a personal token). */
  static ApiClient userClient() {
    ApiClient client = new ApiClient();
    client.setBasePath(URL);
    client.setUsername(env("PACTUM_USER"));
    client.setPassword(env("PACTUM_PASSWORD"));
    return client;
  }

  /**
   * A client for one action or link: no credentials of its own, only the headers the server
   * signed for that one transfer (its transfer token).
   */
  static ApiClient actionClient(Link link) {
    ApiClient client = new ApiClient();
    client.setBasePath(URL);
    link.getHeader().forEach(client::addDefaultHeader);
    return client;
  }

  static byte[] randomBytes(int n) {
    byte[] bytes = new byte[n];
    new SecureRandom().nextBytes(bytes);
    return bytes;
  }

  static String sha256(byte[] bytes) throws Exception {
    StringBuilder hex = new StringBuilder();
    for (byte b : MessageDigest.getInstance("SHA-256").digest(bytes)) hex.append(String.format("%02x", b));
    return hex.toString();
  }

  static File tempFile(byte[] bytes) throws Exception {
    Path path = Files.createTempFile("pactum-upload-", ".bin");
    path.toFile().deleteOnExit();
    return Files.write(path, bytes).toFile();
  }

  /** The generated transfer operation an action's href names: the same URL. */
  static void assertTransferHref(Link link, String oid) {
    assertEquals(URL + "/" + ORG + "/" + REPO + ".git/info/lfs/content/" + oid, link.getHref().toString());
  }

  @Test
  void batchUploadThenDownloadReturnsTheSameBytes() throws Exception {
    byte[] bytes = randomBytes(200_000);
    String oid = sha256(bytes);
    BatchApi batch = new BatchApi(userClient());

    BatchResponse up = batch.batchBatch(ORG, REPO, new BatchRequest()
        .operation(BatchRequest.OperationEnum.UPLOAD)
        .transfers(List.of("basic"))
        .objects(List.of(new ObjectSpec().oid(oid).size((long) bytes.length))));
    assertEquals(BatchResponse.TransferEnum.BASIC, up.getTransfer());
    BatchObject toUpload = up.getObjects().get(0);
    assertNull(toUpload.getError());
    Link upload = toUpload.getActions().getUpload();
    assertTransferHref(upload, oid);
    new TransferApi(actionClient(upload)).objectsUpload(ORG, REPO, oid, tempFile(bytes));
    Link verify = toUpload.getActions().getVerify();
    if (verify != null) new TransferApi(actionClient(verify)).objectsVerify(ORG, REPO, new VerifyRequest().oid(oid).size((long) bytes.length));

    BatchResponse down = batch.batchBatch(ORG, REPO, new BatchRequest()
        .operation(BatchRequest.OperationEnum.DOWNLOAD)
        .objects(List.of(new ObjectSpec().oid(oid).size((long) bytes.length))));
    Link download = down.getObjects().get(0).getActions().getDownload();
    assertTransferHref(download, oid);
    File got = new TransferApi(actionClient(download)).objectsDownload(ORG, REPO, oid, null);
    assertArrayEquals(bytes, Files.readAllBytes(got.toPath()));

    // A second upload of the same object: nothing to do, so no actions.
    BatchResponse again = batch.batchBatch(ORG, REPO, new BatchRequest()
        .operation(BatchRequest.OperationEnum.UPLOAD)
        .objects(List.of(new ObjectSpec().oid(oid).size((long) bytes.length))));
    assertNull(again.getObjects().get(0).getActions());
  }

  @Test
  void batchReportsAMissingObjectInsideItsAnswer() throws Exception {
    String oid = sha256(randomBytes(16));
    BatchResponse down = new BatchApi(userClient()).batchBatch(ORG, REPO, new BatchRequest()
        .operation(BatchRequest.OperationEnum.DOWNLOAD)
        .objects(List.of(new ObjectSpec().oid(oid).size(16L))));
    BatchObject missing = down.getObjects().get(0);
    assertNull(missing.getActions());
    assertEquals(404L, missing.getError().getCode().getValue());
  }

  @Test
  void legacyAnnounceUploadVerifyAndReadBack() throws Exception {
    byte[] bytes = randomBytes(50_000);
    String oid = sha256(bytes);
    ObjectsApi legacy = new ObjectsApi(userClient());

    LegacyObject announced = legacy.legacyCreateObject(ORG, REPO, new LegacyObjectRequest().oid(oid).size((long) bytes.length));
    Link upload = announced.getLinks().getUpload();
    assertTransferHref(upload, oid);
    new TransferApi(actionClient(upload)).objectsUpload(ORG, REPO, oid, tempFile(bytes));
    Link verify = announced.getLinks().getVerify();
    assertNotNull(verify);
    new TransferApi(actionClient(verify)).objectsVerify(ORG, REPO, new VerifyRequest().oid(oid).size((long) bytes.length));

    LegacyObject stored = legacy.legacyGetObject(ORG, REPO, oid);
    assertEquals(oid, stored.getOid());
    assertEquals((long) bytes.length, stored.getSize());
    Link download = stored.getLinks().getDownload();
    File got = new TransferApi(actionClient(download)).objectsDownload(ORG, REPO, oid, null);
    assertArrayEquals(bytes, Files.readAllBytes(got.toPath()));
  }

  @Test
  void legacyMissingObjectIs404WithTheServersMessage() throws Exception {
    String oid = "0".repeat(64);
    ApiException e = assertThrows(ApiException.class, () -> new ObjectsApi(userClient()).legacyGetObject(ORG, REPO, oid));
    assertEquals(404, e.getCode());
    assertTrue(e.getResponseBody().contains("does not exist"), e.getResponseBody());
    assertTrue(e.getResponseBody().contains("request_id"), e.getResponseBody());
  }

  @Test
  void wrongPasswordIs401() {
    ApiClient client = userClient();
    client.setPassword("not-the-password");
    ApiException e = assertThrows(ApiException.class, () -> new ObjectsApi(client).legacyGetObject(ORG, REPO, "0".repeat(64)));
    assertEquals(401, e.getCode());
  }

  @Test
  void locksCreateAndList() throws Exception {
    LocksApi locks = new LocksApi(userClient());
    String path = "assets/java-" + System.nanoTime() + ".bin";
    LockResponse created = locks.locksCreate(ORG, REPO, new LockCreateRequest().path(path));
    assertEquals(path, created.getLock().getPath());
    LockList listed = locks.locksList(ORG, REPO, path, null, null, null, null);
    assertEquals(1, listed.getLocks().size());
    assertEquals(created.getLock().getId(), listed.getLocks().get(0).getId());
  }
}

package dev.treadle.client;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.treadle.v1.ProcessorServiceAttachRequest;
import dev.treadle.v1.ProcessorServiceAttachResponse;
import dev.treadle.v1.ProcessorServiceGrpc;
import dev.treadle.v1.ProcessorWelcome;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A ProcessorService on a loopback port whose every stream the test drives by hand. */
final class FakeServer implements AutoCloseable {
  /** One Attach stream: what the process sent, and the way to answer. */
  static final class Stream {
    final BlockingQueue<ProcessorServiceAttachRequest> received = new LinkedBlockingQueue<>();
    final StreamObserver<ProcessorServiceAttachResponse> out;

    Stream(StreamObserver<ProcessorServiceAttachResponse> out) {
      this.out = out;
    }

    ProcessorServiceAttachRequest next() throws InterruptedException {
      ProcessorServiceAttachRequest r = received.poll(10, TimeUnit.SECONDS);
      assertNotNull(r, "nothing received within 10 s");
      return r;
    }

    synchronized void send(ProcessorServiceAttachResponse m) {
      out.onNext(m);
    }

    void welcome(int version) {
      send(ProcessorServiceAttachResponse.newBuilder()
          .setWelcome(ProcessorWelcome.newBuilder().setProtocolVersion(version)).build());
    }

    synchronized void fail(Status status) {
      out.onError(status.asRuntimeException());
    }

    synchronized void end() {
      out.onCompleted();
    }
  }

  final BlockingQueue<Stream> streams = new LinkedBlockingQueue<>();
  private final Server server;

  FakeServer() throws IOException {
    server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
        .addService(new ProcessorServiceGrpc.ProcessorServiceImplBase() {
          @Override
          public StreamObserver<ProcessorServiceAttachRequest> attach(
              StreamObserver<ProcessorServiceAttachResponse> responses) {
            Stream s = new Stream(responses);
            streams.add(s);
            return new StreamObserver<>() {
              @Override
              public void onNext(ProcessorServiceAttachRequest value) {
                s.received.add(value);
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            };
          }
        }).build().start();
  }

  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  Stream nextStream() throws InterruptedException {
    Stream s = streams.poll(10, TimeUnit.SECONDS);
    assertNotNull(s, "no stream opened within 10 s");
    return s;
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}

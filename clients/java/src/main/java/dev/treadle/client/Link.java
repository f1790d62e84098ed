package dev.treadle.client;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One long-lived Attach stream to one server, reopened with exponential backoff and full jitter
 * until closed, never after a refused handshake. The processor and tool SDKs differ only in the
 * {@link Session} they give it.
 */
final class Link<Req, Resp> implements Attachment {
  private static final Logger LOG = Logger.getLogger("dev.treadle.client");

  /** A handshake refused with one of these codes would be refused again. */
  static final Set<Status.Code> FATAL = EnumSet.of(Status.Code.INVALID_ARGUMENT,
      Status.Code.FAILED_PRECONDITION, Status.Code.PERMISSION_DENIED, Status.Code.UNAUTHENTICATED,
      Status.Code.UNIMPLEMENTED);

  /** What one stream needs from the processor or tool SDK. */
  interface Session<Req, Resp> {
    Req handshake();

    /** Handles one server message; true when it was the welcome. */
    boolean onMessage(Resp message);

    /** The stream ended: cancel in-flight work (the server no longer waits for it). */
    void close();
  }

  private final String target;
  private final String label;
  private final ManagedChannel channel;
  private final BiFunction<ManagedChannel, StreamObserver<Resp>, StreamObserver<Req>> open;
  private final Function<Consumer<Req>, Session<Req, Resp>> sessions;
  private final Settings settings;
  private final Runnable onClose;
  private final CountDownLatch ready = new CountDownLatch(1);
  private final AtomicInteger opened = new AtomicInteger();
  private final Thread thread;
  private volatile boolean attached;
  private volatile boolean closed;
  private volatile AttachException error;
  private volatile ClientCallStreamObserver<Req> current;

  Link(String target, String label, Settings settings,
      BiFunction<ManagedChannel, StreamObserver<Resp>, StreamObserver<Req>> open,
      Function<Consumer<Req>, Session<Req, Resp>> sessions, Runnable onClose) {
    this.onClose = onClose;
    this.target = target;
    this.label = label;
    this.settings = settings;
    this.open = open;
    this.sessions = sessions;
    this.channel = settings.channel(target);
    this.thread = new Thread(this::run, "treadle-attach " + target);
    this.thread.setDaemon(true);
    this.thread.start();
  }

  private void run() {
    long delay = settings.backoffInitial.toNanos();
    long max = settings.backoffMax.toNanos();
    while (!closed) {
      boolean[] welcomed = {false};
      Status status = once(welcomed);
      attached = false;
      if (closed) {
        break;
      }
      if (FATAL.contains(status.getCode())) {
        error = new AttachException(target, status);
        LOG.severe(label + ": attach refused by " + error.getMessage());
        ready.countDown();
        break;
      }
      if (welcomed[0]) {
        delay = settings.backoffInitial.toNanos();
      }
      // Full jitter keeps a fleet of processes from reconnecting in lock-step.
      long wait = delay / 2 + ThreadLocalRandom.current().nextLong(delay / 2 + 1);
      LOG.warning(String.format("%s: %s %s: %s; retrying in %.1fs", label,
          welcomed[0] ? "the stream to" : "cannot attach to", target, describe(status), wait / 1e9));
      try {
        TimeUnit.NANOSECONDS.sleep(wait);
      } catch (InterruptedException e) {
        break;
      }
      delay = Math.min(delay * 2, max);
    }
    channel.shutdownNow();
  }

  private static String describe(Status status) {
    return status.isOk() ? "the server ended the stream" : status.getCode() + ": " + status.getDescription();
  }

  /** One stream: its final status; {@code welcomed[0]} says whether the server welcomed it. */
  private Status once(boolean[] welcomed) {
    CompletableFuture<Status> ended = new CompletableFuture<>();
    Object sendLock = new Object();
    @SuppressWarnings("unchecked")
    ClientCallStreamObserver<Req>[] call = new ClientCallStreamObserver[1];
    Session<Req, Resp>[] session = new Session[1];
    session[0] = sessions.apply(message -> {
      synchronized (sendLock) {
        if (!ended.isDone()) {
          call[0].onNext(message);
        }
      }
    });
    ClientResponseObserver<Req, Resp> responses = new ClientResponseObserver<>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<Req> requestStream) {
        call[0] = requestStream;
      }

      @Override
      public void onNext(Resp message) {
        if (session[0].onMessage(message)) {
          welcomed[0] = true;
          attached = true;
          ready.countDown();
          LOG.info(label + " attached to " + target);
        }
      }

      @Override
      public void onError(Throwable t) {
        ended.complete(Status.fromThrowable(t));
      }

      @Override
      public void onCompleted() {
        ended.complete(Status.OK);
      }
    };
    opened.incrementAndGet();
    try {
      open.apply(channel, responses);
    } catch (RuntimeException e) {
      session[0].close();
      return Status.fromThrowable(e);
    }
    current = call[0];
    synchronized (sendLock) {
      call[0].onNext(session[0].handshake());
    }
    if (closed) {
      call[0].cancel("attachment closed", null);
    }
    Status status;
    try {
      status = ended.get();
    } catch (InterruptedException e) {
      status = Status.CANCELLED; // closed
    } catch (Exception e) {
      status = Status.fromThrowable(e);
    } finally {
      synchronized (sendLock) {
        ended.complete(Status.CANCELLED);
      }
      session[0].close();
    }
    if (status.getCode() == Status.Code.UNKNOWN && status.getCause() != null) {
      LOG.log(Level.WARNING, label + ": stream failed", status.getCause());
    }
    return status;
  }

  @Override
  public void awaitReady(Duration timeout) throws AttachException, InterruptedException {
    if (!ready.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      throw new IllegalStateException(label + ": no welcome from " + target + " within " + timeout);
    }
    if (error != null) {
      throw error;
    }
  }

  @Override
  public boolean isAttached() {
    return attached;
  }

  @Override
  public int streamsOpened() {
    return opened.get();
  }

  @Override
  public String target() {
    return target;
  }

  @Override
  public AttachException error() {
    return error;
  }

  @Override
  public void close() {
    closed = true;
    ClientCallStreamObserver<Req> c = current;
    if (c != null) {
      c.cancel("attachment closed", null);
    }
    thread.interrupt();
    try {
      thread.join(5000);
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      onClose.run();
    }
  }
}

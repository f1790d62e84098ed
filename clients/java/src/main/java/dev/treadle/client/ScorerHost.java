package dev.treadle.client;

import dev.treadle.v1.ScoreInvocation;
import dev.treadle.v1.ScoreInvocationResult;
import dev.treadle.v1.ScorerDeclaration;
import dev.treadle.v1.ScorerHandshake;
import dev.treadle.v1.ScorerServiceAttachRequest;
import dev.treadle.v1.ScorerServiceAttachResponse;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.logging.Logger;

/** Serves scorers over {@code ScorerService.Attach}. */
final class ScorerHost {
  private static final Logger LOG = Logger.getLogger("dev.treadle.client");

  private final Map<String, Scorer> scorers = new LinkedHashMap<>();
  private final Settings settings;
  private final Tracing tracing;
  final ExecutorService executor = Executors.newCachedThreadPool(ProcessorHost.daemon("treadle-scorer"));

  ScorerHost(List<Scorer> list, Settings settings) {
    if (list.isEmpty()) {
      throw new IllegalArgumentException("give at least one scorer");
    }
    for (Scorer s : list) {
      if (scorers.putIfAbsent(s.id(), s) != null) {
        throw new IllegalArgumentException("scorer " + s.id() + " is given twice");
      }
    }
    this.settings = settings;
    this.tracing = new Tracing(settings.openTelemetry());
  }

  String label() {
    return "scorer " + String.join(", ", scorers.keySet());
  }

  Link.Session<ScorerServiceAttachRequest, ScorerServiceAttachResponse> session(Consumer<ScorerServiceAttachRequest> send) {
    Map<String, Future<?>> running = new ConcurrentHashMap<>();
    return new Link.Session<>() {
      @Override
      public ScorerServiceAttachRequest handshake() {
        ScorerHandshake.Builder h = ScorerHandshake.newBuilder().addProtocolVersions(1).setInstanceId(settings.instanceId());
        scorers.values().forEach(s -> h.addScorers(
            ScorerDeclaration.newBuilder().setId(s.id()).setName(s.name()).setDescription(s.description())));
        return ScorerServiceAttachRequest.newBuilder().setHandshake(h).build();
      }

      @Override
      public boolean onMessage(ScorerServiceAttachResponse message) {
        switch (message.getMessageCase()) {
          case WELCOME:
            return true;
          case INVOCATION: {
            ScoreInvocation invocation = message.getInvocation();
            running.put(invocation.getInvocationId(), executor.submit(() -> {
              ScoreInvocationResult result = run(invocation);
              if (running.remove(invocation.getInvocationId()) != null) {
                send.accept(ScorerServiceAttachRequest.newBuilder().setResult(result).build());
              }
            }));
            break;
          }
          case CANCEL: {
            Future<?> f = running.remove(message.getCancel().getInvocationId());
            if (f != null) {
              f.cancel(true);
            }
            break;
          }
          case DRAIN:
            LOG.info("server is draining; will reconnect when it closes the stream");
            break;
          default:
            break;
        }
        return false;
      }

      @Override
      public void close() {
        running.values().forEach(f -> f.cancel(true));
      }
    };
  }

  private ScoreInvocationResult run(ScoreInvocation invocation) {
    ScoreInvocationResult.Builder result = ScoreInvocationResult.newBuilder().setInvocationId(invocation.getInvocationId());
    Map<String, Object> attributes = new LinkedHashMap<>();
    attributes.put("gen_ai.operation.name", "evaluate");
    attributes.put("treadle.scorer.id", invocation.getScorerId());
    attributes.put("treadle.run.id", invocation.getRunId());
    Span span = tracing.start("score " + invocation.getScorerId(), invocation.getTraceContext(), attributes);
    try (Scope scope = span.makeCurrent()) {
      Scorer scorer = scorers.get(invocation.getScorerId());
      if (scorer == null) {
        throw new IllegalArgumentException("scorer " + invocation.getScorerId() + " is not served by this process");
      }
      Score score = scorer.function().apply(new ScorerRun(invocation));
      result.setScore(score.score()).setReason(score.reason());
      if (!score.details().isEmpty()) {
        result.setDetails(Json.toStruct(score.details()));
      }
    } catch (Exception e) { // the server retries it as the scorer's failure policy says
      Tracing.markError(span, e);
      result.setError(ProcessorHost.message(e));
    } finally {
      span.end();
    }
    return result.build();
  }
}

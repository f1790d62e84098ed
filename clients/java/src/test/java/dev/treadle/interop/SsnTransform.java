package dev.treadle.interop;

import dev.treadle.client.Attachment;
import dev.treadle.client.Processor;
import dev.treadle.client.ProcessorOptions;
import dev.treadle.client.TransformToolPayloadArgs;
import dev.treadle.client.Treadle;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Java twin of tests/remote/ts/ssn_transform.ts: a {@code transformToolPayload} for the tool
 * lookup_customer only. In the display an SSN keeps its last four digits ({@code ***-**-1120});
 * in the transcript the ssn field is gone; a payload that is not an object yields nothing (the
 * server then shows its placeholder).
 *
 * <pre>SsnTransform TARGET</pre>
 */
public final class SsnTransform implements Processor {
  @Override
  public String id() {
    return "ssn-transform";
  }

  @Override
  public ProcessorOptions options() {
    return ProcessorOptions.defaults().toolNames("lookup_customer");
  }

  @Override
  public Object transformToolPayload(TransformToolPayloadArgs args) {
    System.out.println("transform " + args.target() + " " + args.phase());
    if (!(args.payload() instanceof Map<?, ?> payload)) {
      return null;
    }
    Map<Object, Object> record = new LinkedHashMap<>(payload);
    if (!(record.get("ssn") instanceof String ssn)) {
      return record;
    }
    if (args.target().equals("transcript")) {
      record.remove("ssn");
    } else {
      record.put("ssn", "***-**-" + ssn.substring(Math.max(0, ssn.length() - 4)));
    }
    return record;
  }

  public static void main(String[] args) throws Exception {
    Attachment attached = Treadle.attach(args[0], List.of(new SsnTransform()));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}

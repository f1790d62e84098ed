package dev.treadle.client;

import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Conversions between plain Java values ({@code Map<String, ?>}, {@code List<?>}, {@code String},
 * {@code Number}, {@code Boolean}, {@code null}) and {@code google.protobuf.Struct}/{@code Value}.
 * Numbers come back typed: a whole number (within the range a double holds exactly, 2^53) as a
 * {@code Long}, any other as a {@code Double}; read either through {@link Number}.
 */
public final class Json {
  private static final double MAX_EXACT = 9007199254740992.0; // 2^53

  private Json() {}

  /** {@code value} as a protobuf Value; {@link IllegalArgumentException} names what is not JSON. */
  public static Value toValue(Object value) {
    if (value == null) {
      return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
    }
    if (value instanceof Value v) {
      return v;
    }
    if (value instanceof Struct s) {
      return Value.newBuilder().setStructValue(s).build();
    }
    if (value instanceof String s) {
      return Value.newBuilder().setStringValue(s).build();
    }
    if (value instanceof Boolean b) {
      return Value.newBuilder().setBoolValue(b).build();
    }
    if (value instanceof Number n) {
      return Value.newBuilder().setNumberValue(n.doubleValue()).build();
    }
    if (value instanceof Map<?, ?> m) {
      return Value.newBuilder().setStructValue(toStruct(m)).build();
    }
    if (value instanceof Iterable<?> items) {
      ListValue.Builder list = ListValue.newBuilder();
      for (Object item : items) {
        list.addValues(toValue(item));
      }
      return Value.newBuilder().setListValue(list).build();
    }
    if (value instanceof Object[] items) {
      return toValue(List.of(items));
    }
    throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
  }

  /** A map with string keys as a Struct. */
  public static Struct toStruct(Map<?, ?> map) {
    Struct.Builder out = Struct.newBuilder();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String key)) {
        throw new IllegalArgumentException("JSON object keys must be strings, got " + e.getKey());
      }
      out.putFields(key, toValue(e.getValue()));
    }
    return out.build();
  }

  /** A Value as plain Java: Map, List, String, Long (whole numbers), Double, Boolean or null. */
  public static Object fromValue(Value value) {
    switch (value.getKindCase()) {
      case STRUCT_VALUE:
        return fromStruct(value.getStructValue());
      case LIST_VALUE: {
        List<Object> out = new ArrayList<>();
        for (Value v : value.getListValue().getValuesList()) {
          out.add(fromValue(v));
        }
        return out;
      }
      case STRING_VALUE:
        return value.getStringValue();
      case NUMBER_VALUE: {
        double n = value.getNumberValue();
        return n == Math.rint(n) && Math.abs(n) <= MAX_EXACT ? (Object) (long) n : (Object) n;
      }
      case BOOL_VALUE:
        return value.getBoolValue();
      default:
        return null;
    }
  }

  /** A Struct as a mutable, insertion-ordered map. */
  public static Map<String, Object> fromStruct(Struct struct) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<String, Value> e : struct.getFieldsMap().entrySet()) {
      out.put(e.getKey(), fromValue(e.getValue()));
    }
    return out;
  }

  /** {@code value} as compact JSON text. */
  public static String stringify(Object value) {
    try {
      return com.google.protobuf.util.JsonFormat.printer().omittingInsignificantWhitespace().print(toValue(value));
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(e);
    }
  }
}

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader and writer (standard library only), enough for the arena's protocol
 * (docs/protocol.md). Values are plain Java objects: {@code Map<String, Object>} (fields in
 * order), {@code List<Object>}, {@code String}, {@code Long} (integers) or {@code Double},
 * {@code Boolean} and {@code null}. Strings have every escape decoded, {@code \\uXXXX} too.
 */
public final class Json {
    private final String s;
    private int p;

    private Json(String s) {
        this.s = s;
    }

    /** Parse one JSON text; an {@link IllegalArgumentException} says what is wrong and where. */
    public static Object parse(String text) {
        Json r = new Json(text);
        Object v = r.value(0);
        r.ws();
        if (r.p != r.s.length()) throw r.fail("text after the value");
        return v;
    }

    /**
     * The value found by following {@code path} (field names and list indices) from
     * {@code value}, or null where the path leads nowhere: {@code get(msg, "observation", "seat")}.
     */
    public static Object get(Object value, Object... path) {
        for (Object step : path) {
            if (step instanceof String && value instanceof Map) {
                value = ((Map<?, ?>) value).get(step);
            } else if (step instanceof Integer && value instanceof List) {
                List<?> list = (List<?>) value;
                int i = (Integer) step;
                value = i >= 0 && i < list.size() ? list.get(i) : null;
            } else {
                return null;
            }
        }
        return value;
    }

    /** The value as compact JSON on one line (every character outside ASCII escaped). */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value);
        return out.toString();
    }

    /** A map of the given names and values, in order: {@code object("type", "pass")}. */
    public static Map<String, Object> object(Object... namesAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < namesAndValues.length; i += 2) map.put((String) namesAndValues[i], namesAndValues[i + 1]);
        return map;
    }

    private static void write(StringBuilder out, Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String) {
            writeString(out, (String) v);
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("JSON has no " + d);
            out.append(d);
        } else if (v instanceof Number || v instanceof Boolean) {
            out.append(v);
        } else if (v instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) out.append(',');
                first = false;
                writeString(out, String.valueOf(e.getKey()));
                out.append(':');
                write(out, e.getValue());
            }
            out.append('}');
        } else if (v instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) v) {
                if (!first) out.append(',');
                first = false;
                write(out, item);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write a " + v.getClass().getName() + " as JSON");
        }
    }

    private static void writeString(StringBuilder out, String str) {
        out.append('"');
        for (int i = 0; i < str.length(); i++) {
            char c = str.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
            }
        }
        out.append('"');
    }

    private IllegalArgumentException fail(String what) {
        return new IllegalArgumentException("JSON: " + what + " at character " + p);
    }

    private char peek() {
        return p < s.length() ? s.charAt(p) : '\0';
    }

    private void ws() {
        while (p < s.length() && " \t\n\r".indexOf(s.charAt(p)) >= 0) p++;
    }

    private void expect(char c) {
        if (peek() != c) throw fail("unexpected character");
        p++;
    }

    private Object word(String w, Object v) {
        for (int i = 0; i < w.length(); i++) expect(w.charAt(i));
        return v;
    }

    private Object value(int depth) {
        if (depth > 256) throw fail("nesting too deep");
        ws();
        char c = peek();
        if (c == '{') {
            p++;
            Map<String, Object> map = new LinkedHashMap<>();
            ws();
            if (peek() == '}') {
                p++;
                return map;
            }
            while (true) {
                ws();
                if (peek() != '"') throw fail("expected a field name");
                String key = string();
                ws();
                expect(':');
                map.put(key, value(depth + 1));
                ws();
                if (peek() == ',') {
                    p++;
                    continue;
                }
                expect('}');
                return map;
            }
        }
        if (c == '[') {
            p++;
            List<Object> list = new ArrayList<>();
            ws();
            if (peek() == ']') {
                p++;
                return list;
            }
            while (true) {
                list.add(value(depth + 1));
                ws();
                if (peek() == ',') {
                    p++;
                    continue;
                }
                expect(']');
                return list;
            }
        }
        if (c == '"') return string();
        if (c == 't') return word("true", Boolean.TRUE);
        if (c == 'f') return word("false", Boolean.FALSE);
        if (c == 'n') return word("null", null);
        return number();
    }

    private static boolean digit(char c) {
        return c >= '0' && c <= '9';
    }

    private void digits() {
        if (!digit(peek())) throw fail("expected a digit");
        while (digit(peek())) p++;
    }

    private Object number() {
        int start = p;
        boolean integer = true;
        if (peek() == '-') p++;
        if (peek() == '0') p++;
        else if (digit(peek())) digits();
        else throw fail("expected a value");
        if (peek() == '.') {
            integer = false;
            p++;
            digits();
        }
        if (peek() == 'e' || peek() == 'E') {
            integer = false;
            p++;
            if (peek() == '+' || peek() == '-') p++;
            digits();
        }
        String text = s.substring(start, p);
        if (integer) {
            try {
                return Long.parseLong(text);
            } catch (NumberFormatException tooLong) {
                // beyond a long: kept as a double
            }
        }
        return Double.parseDouble(text);
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            if (p >= s.length()) throw fail("unterminated string");
            char c = s.charAt(p++);
            if (c == '"') return out.toString();
            if (c < 0x20) throw fail("control character in a string");
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = peek();
            p++;
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u':  // a UTF-16 unit: the two halves of a surrogate pair join in the String
                    int unit = 0;
                    for (int i = 0; i < 4; i++) {
                        char h = peek();
                        int d = h < 0x80 ? Character.digit(h, 16) : -1;
                        if (d < 0) throw fail("bad \\u escape");
                        unit = unit * 16 + d;
                        p++;
                    }
                    out.append((char) unit);
                    break;
                default: throw fail("bad escape");
            }
        }
    }
}

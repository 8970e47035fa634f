import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Project L starter bot in Java (standard library only): it plays the first legal option of
 * every request. The protocol is docs/protocol.md: one JSON object per line on stdin, one
 * reply per request on stdout, debugging output on stderr. Write your strategy in choose().
 */
public final class Bot {
    static final String NAME = "java-example";
    static final String VERSION = "1.0";

    /** The action or decision to answer a request with (R14's JSON, docs/rules.md). */
    static Object choose(Map<?, ?> request) {
        Object legal = request.get("legal");  // the legal options: asked for in `ready`
        if (legal instanceof List && !((List<?>) legal).isEmpty()) return ((List<?>) legal).get(0);
        // Without a list (none is sent if `ready` did not ask): the answer that is always legal.
        Object type = request.get("type");
        if ("action".equals(type)) return Json.object("type", "pass");
        if ("reward".equals(type))  // the first of the rewards offered (R9.3)
            return Json.object("type", "reward", "take", Json.get(request, "observation", "decision", "options", 0));
        if ("level_up".equals(type)) return Json.object("type", "level_up", "steps", new ArrayList<>());
        return Json.object("type", "finish", "placements", new ArrayList<>());
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Object parsed;
            try {
                parsed = Json.parse(line);
            } catch (IllegalArgumentException e) {
                System.err.println("cannot read a message: " + e.getMessage());
                continue;
            }
            if (!(parsed instanceof Map)) continue;
            Map<?, ?> msg = (Map<?, ?>) parsed;
            Object type = msg.get("type");
            Map<String, Object> reply;
            if ("hello".equals(type)) {  // a new game: forget the last one's state here
                reply = Json.object("type", "ready", "id", msg.get("id"), "name", NAME, "version", VERSION,
                                    "legal_actions", true);
            } else if ("action".equals(type) || "reward".equals(type) || "level_up".equals(type)
                       || "finish".equals(type)) {
                reply = Json.object("id", msg.get("id"), "action", choose(msg));
            } else if ("quit".equals(type)) {
                break;
            } else {
                continue;  // game_over, and any message this bot does not know: no reply
            }
            out.print(Json.write(reply) + "\n");
            out.flush();  // the arena waits for the whole line
        }
    }
}

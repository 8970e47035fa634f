// A Project L starter bot in C++17 (standard library only): it plays the first legal option
// of every request. The protocol is docs/protocol.md: one JSON object per line on stdin, one
// reply per request on stdout, debugging output on stderr. Write your strategy in choose().
#include <iostream>
#include <string>

#include "json.hpp"

static const char* NAME = "cpp-example";
static const char* VERSION = "1.0";

// The action or decision to answer a request with (R14's JSON, docs/rules.md).
static json::Value choose(const json::Value& request) {
    const json::Value& legal = request["legal"];  // the legal options: asked for in `ready`
    if (legal.is_array() && legal.size() > 0) return legal[0];
    // Without a list (none is sent if `ready` did not ask): the answer that is always legal.
    const std::string& type = request["type"].as_string();
    json::Value action = json::Value::object().set("type", json::Value::string(type));
    if (type == "action") return json::Value::object().set("type", json::Value::string("pass"));
    if (type == "reward")  // the first of the rewards offered (R9.3)
        return action.set("take", request["observation"]["decision"]["options"][0]);
    if (type == "level_up") return action.set("steps", json::Value::array());
    return action.set("placements", json::Value::array());  // finish: place nothing
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        json::Value msg;
        try {
            msg = json::parse(line);
        } catch (const json::Error& e) {
            std::cerr << "cannot read a message: " << e.what() << std::endl;
            continue;
        }
        const std::string& type = msg["type"].as_string();
        json::Value reply = json::Value::object();
        if (type == "hello") {  // a new game: forget the last one's state here
            reply.set("type", json::Value::string("ready"))
                .set("id", msg["id"])
                .set("name", json::Value::string(NAME))
                .set("version", json::Value::string(VERSION))
                .set("legal_actions", json::Value::boolean(true));
        } else if (type == "action" || type == "reward" || type == "level_up" || type == "finish") {
            reply.set("id", msg["id"]).set("action", choose(msg));
        } else if (type == "quit") {
            break;
        } else {
            continue;  // game_over, and any message this bot does not know: no reply
        }
        std::cout << json::dump(reply) << std::endl;  // endl flushes: the arena waits for the line
    }
    return 0;
}

// A Project L starter bot in Go (standard library only: encoding/json reads and writes the
// protocol's JSON): it plays the first legal option of every request. The protocol is
// docs/protocol.md: one JSON object per line on stdin, one reply per request on stdout,
// debugging output on stderr. Write your strategy in choose.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

const name, version = "go-example", "1.0"

// message is what the bot reads of a line from the arena; fields it does not name are ignored.
type message struct {
	Type        string            `json:"type"`
	ID          json.RawMessage   `json:"id"`    // echoed in the reply as it came
	Legal       []json.RawMessage `json:"legal"` // the legal options, each as R14's JSON (docs/rules.md)
	Observation map[string]any    `json:"observation"`
}

type ready struct {
	Type         string          `json:"type"`
	ID           json.RawMessage `json:"id"`
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	LegalActions bool            `json:"legal_actions"`
}

type answer struct {
	ID     json.RawMessage `json:"id"`
	Action any             `json:"action"`
}

// choose is the action or decision to answer a request with (R14's JSON).
func choose(req *message) any {
	if len(req.Legal) > 0 { // the legal options: asked for in `ready`
		return req.Legal[0]
	}
	// Without a list (none is sent if `ready` did not ask): the answer that is always legal.
	switch req.Type {
	case "action":
		return map[string]any{"type": "pass"}
	case "reward": // the first of the rewards offered (R9.3)
		var take any
		if decision, ok := req.Observation["decision"].(map[string]any); ok {
			if options, ok := decision["options"].([]any); ok && len(options) > 0 {
				take = options[0]
			}
		}
		return map[string]any{"type": "reward", "take": take}
	case "level_up":
		return map[string]any{"type": "level_up", "steps": []any{}}
	}
	return map[string]any{"type": "finish", "placements": []any{}}
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var msg message
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber() // numbers as their text, exact
			if derr := dec.Decode(&msg); derr != nil {
				fmt.Fprintln(os.Stderr, "cannot read a message:", derr)
				continue
			}
			var reply any
			switch msg.Type {
			case "hello": // a new game: forget the last one's state here
				reply = ready{"ready", msg.ID, name, version, true}
			case "action", "reward", "level_up", "finish":
				reply = answer{msg.ID, choose(&msg)}
			case "quit":
				return
			default:
				continue // game_over, and any message this bot does not know: no reply
			}
			data, merr := json.Marshal(reply)
			if merr != nil {
				fmt.Fprintln(os.Stderr, "cannot write a reply:", merr)
				continue
			}
			out.Write(append(data, '\n'))
			if out.Flush() != nil { // the arena waits for the whole line
				return
			}
		}
		if err != nil { // the end of the input: the arena is gone
			return
		}
	}
}

// A small JSON value with its reader and writer (C++17, standard library only), enough for
// the arena's protocol (docs/protocol.md): objects keep their fields in order, a number keeps
// the text it was read as (so it is written back exactly), strings are UTF-8 with every
// escape decoded (\uXXXX and surrogate pairs included). A missing field reads as null.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace json {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Value {
public:
    enum class Kind { Null, Bool, Number, String, Array, Object };

    Value() = default;
    static Value null() { return Value(); }
    static Value boolean(bool b) { Value v; v.kind_ = Kind::Bool; v.bool_ = b; return v; }
    static Value number(long long n) { Value v; v.kind_ = Kind::Number; v.text_ = std::to_string(n); return v; }
    static Value string(std::string s) { Value v; v.kind_ = Kind::String; v.text_ = std::move(s); return v; }
    static Value array() { Value v; v.kind_ = Kind::Array; return v; }
    static Value object() { Value v; v.kind_ = Kind::Object; return v; }

    Kind kind() const { return kind_; }
    bool is_null() const { return kind_ == Kind::Null; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_array() const { return kind_ == Kind::Array; }
    bool is_object() const { return kind_ == Kind::Object; }
    bool as_bool() const { return kind_ == Kind::Bool && bool_; }
    long long as_int() const { return kind_ == Kind::Number ? std::strtoll(text_.c_str(), nullptr, 10) : 0; }
    double as_double() const { return kind_ == Kind::Number ? std::strtod(text_.c_str(), nullptr) : 0.0; }
    const std::string& as_string() const { return text_; }  // a string's text ("" otherwise)

    // Arrays and objects: how many elements or fields; element i; the field named key.
    std::size_t size() const { return items_.size(); }
    const Value& operator[](std::size_t i) const { return i < items_.size() ? items_[i] : missing(); }
    const Value& operator[](const std::string& key) const {
        if (kind_ == Kind::Object)
            for (std::size_t i = 0; i < keys_.size(); i++)
                if (keys_[i] == key) return items_[i];
        return missing();
    }
    const std::vector<std::string>& keys() const { return keys_; }

    Value& push(Value v) { items_.push_back(std::move(v)); return *this; }
    Value& set(std::string key, Value v) {
        for (std::size_t i = 0; i < keys_.size(); i++)
            if (keys_[i] == key) { items_[i] = std::move(v); return *this; }
        keys_.push_back(std::move(key));
        items_.push_back(std::move(v));
        return *this;
    }

private:
    friend class Reader;
    friend void write(std::string& out, const Value& v);
    static const Value& missing() { static const Value none; return none; }

    Kind kind_ = Kind::Null;
    bool bool_ = false;
    std::string text_;               // a number's text, or a string's UTF-8
    std::vector<std::string> keys_;  // an object's field names
    std::vector<Value> items_;       // an array's elements, or an object's values
};

class Reader {
public:
    explicit Reader(const std::string& text) : s_(text) {}

    Value document() {
        Value v = value(0);
        ws();
        if (p_ != s_.size()) fail("text after the value");
        return v;
    }

private:
    const std::string& s_;
    std::size_t p_ = 0;

    [[noreturn]] void fail(const char* what) const {
        throw Error(std::string("JSON: ") + what + " at byte " + std::to_string(p_));
    }
    void ws() { while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) p_++; }
    char peek() const { return p_ < s_.size() ? s_[p_] : '\0'; }
    void expect(char c) { if (peek() != c) fail("unexpected character"); p_++; }
    void word(const char* w) { for (; *w; w++) expect(*w); }

    Value value(int depth) {
        if (depth > 256) fail("nesting too deep");
        ws();
        Value v;
        switch (peek()) {
        case '{':
            p_++;
            v.kind_ = Value::Kind::Object;
            ws();
            if (peek() == '}') { p_++; return v; }
            for (;;) {
                ws();
                if (peek() != '"') fail("expected a field name");
                std::string key = string();
                ws();
                expect(':');
                v.keys_.push_back(std::move(key));
                v.items_.push_back(value(depth + 1));
                ws();
                if (peek() == ',') { p_++; continue; }
                expect('}');
                return v;
            }
        case '[':
            p_++;
            v.kind_ = Value::Kind::Array;
            ws();
            if (peek() == ']') { p_++; return v; }
            for (;;) {
                v.items_.push_back(value(depth + 1));
                ws();
                if (peek() == ',') { p_++; continue; }
                expect(']');
                return v;
            }
        case '"':
            v.kind_ = Value::Kind::String;
            v.text_ = string();
            return v;
        case 't': word("true"); return Value::boolean(true);
        case 'f': word("false"); return Value::boolean(false);
        case 'n': word("null"); return v;
        default:
            v.kind_ = Value::Kind::Number;
            v.text_ = number();
            return v;
        }
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }

    std::string number() {
        std::size_t start = p_;
        if (peek() == '-') p_++;
        if (peek() == '0') p_++;
        else if (digit(peek())) while (digit(peek())) p_++;
        else fail("expected a value");
        if (peek() == '.') {
            p_++;
            if (!digit(peek())) fail("expected a digit");
            while (digit(peek())) p_++;
        }
        if (peek() == 'e' || peek() == 'E') {
            p_++;
            if (peek() == '+' || peek() == '-') p_++;
            if (!digit(peek())) fail("expected a digit");
            while (digit(peek())) p_++;
        }
        return s_.substr(start, p_ - start);
    }

    unsigned hex4() {
        unsigned u = 0;
        for (int i = 0; i < 4; i++) {
            char c = peek();
            p_++;
            u <<= 4;
            if (c >= '0' && c <= '9') u |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f') u |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') u |= unsigned(c - 'A' + 10);
            else fail("bad \\u escape");
        }
        return u;
    }

    static void utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            if (p_ >= s_.size()) fail("unterminated string");
            char c = s_[p_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') { out += c; continue; }
            char e = peek();
            p_++;
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(p_, 2, "\\u") == 0) {
                    std::size_t back = p_;
                    p_ += 2;
                    unsigned low = hex4();
                    if (low >= 0xDC00 && low < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    else p_ = back;  // not a pair: the next escape is read on its own
                }
                if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;  // a lone surrogate has no UTF-8
                utf8(out, cp);
                break;
            }
            default: fail("bad escape");
            }
        }
    }
};

// Parse one JSON text; throws json::Error saying what is wrong and where.
inline Value parse(const std::string& text) { return Reader(text).document(); }

inline void write(std::string& out, const Value& v) {
    static const char* hex = "0123456789abcdef";
    switch (v.kind_) {
    case Value::Kind::Null: out += "null"; break;
    case Value::Kind::Bool: out += v.bool_ ? "true" : "false"; break;
    case Value::Kind::Number: out += v.text_; break;
    case Value::Kind::String:
        out += '"';
        for (char c : v.text_) {
            unsigned char u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') { out += '\\'; out += c; }
            else if (c == '\n') out += "\\n";
            else if (c == '\r') out += "\\r";
            else if (c == '\t') out += "\\t";
            else if (u < 0x20) { out += "\\u00"; out += hex[u >> 4]; out += hex[u & 15]; }
            else out += c;
        }
        out += '"';
        break;
    case Value::Kind::Array:
        out += '[';
        for (std::size_t i = 0; i < v.items_.size(); i++) {
            if (i) out += ',';
            write(out, v.items_[i]);
        }
        out += ']';
        break;
    case Value::Kind::Object:
        out += '{';
        for (std::size_t i = 0; i < v.items_.size(); i++) {
            if (i) out += ',';
            write(out, Value::string(v.keys_[i]));
            out += ':';
            write(out, v.items_[i]);
        }
        out += '}';
        break;
    }
}

// The value as compact JSON on one line (newlines in strings are escaped).
inline std::string dump(const Value& v) {
    std::string out;
    write(out, v);
    return out;
}

}  // namespace json

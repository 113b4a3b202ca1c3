// The fields of a trace record (docs/trace-format.md) as the reader
// (trace_reader.cpp) decodes them: their numbers and bits, the member each
// value is stored in, the lookup of a key, and the scans of raw JSON text
// that both of the reader's paths use.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace xsc::trace_fields {

constexpr std::size_t kLongestKey = 6;  // "frames"

// The fields a record may carry, by number; unknown keys are skipped (see
// the versioning rule in docs/trace-format.md).
enum Field : int {
  kFieldT, kFieldTh, kFieldSk, kFieldS, kFieldE, kFieldA, kFieldN, kFieldNm, kFieldG, kFieldId,
  kFieldFl, kFieldAk, kFieldFk, kFieldAc, kFieldW, kFieldStr, kFieldD, kFieldFrames, kFieldSy,
  kFieldPg, kFieldCount,
  kUnknownField = -1,
};

// A field's bit in Fields::present.
enum FieldBit : std::uint32_t {
  kT = 1u << kFieldT, kTh = 1u << kFieldTh, kSk = 1u << kFieldSk, kS = 1u << kFieldS,
  kE = 1u << kFieldE, kA = 1u << kFieldA, kN = 1u << kFieldN, kNm = 1u << kFieldNm,
  kG = 1u << kFieldG, kId = 1u << kFieldId, kFl = 1u << kFieldFl, kAk = 1u << kFieldAk,
  kFk = 1u << kFieldFk, kAc = 1u << kFieldAc, kW = 1u << kFieldW, kStr = 1u << kFieldStr,
  kD = 1u << kFieldD, kFrames = 1u << kFieldFrames, kSy = 1u << kFieldSy, kPg = 1u << kFieldPg,
};

struct Fields {
  std::uint32_t present = 0;
  std::string_view t, fl, ak, fk, ac, w, str;
  std::uint64_t th = 0, sk = 0, s = 0, e = 0, a = 0, n = 0, nm = 0, g = 0, id = 0;
  bool d = false, sy = false, pg = false;
  simdjson::dom::array frames;
};

enum class Type : std::uint8_t { kUint, kString, kBool, kArray };

// Each field's value type and member, by field number, so that storing a
// value needs no second dispatch on the key.
constexpr Type kFieldType[kFieldCount] = {
    Type::kString, Type::kUint, Type::kUint, Type::kUint, Type::kUint, Type::kUint,
    Type::kUint, Type::kUint, Type::kUint, Type::kUint, Type::kString, Type::kString,
    Type::kString, Type::kString, Type::kString, Type::kString, Type::kBool, Type::kArray,
    Type::kBool, Type::kBool,
};
// The boolean fields' members, by field number.
constexpr bool Fields::*kBoolMember[kFieldCount] = {
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &Fields::d,  nullptr, &Fields::sy,
    &Fields::pg,
};
constexpr std::uint64_t Fields::*kUintMember[kFieldCount] = {
    nullptr, &Fields::th, &Fields::sk, &Fields::s, &Fields::e, &Fields::a, &Fields::n,
    &Fields::nm, &Fields::g, &Fields::id,
};
constexpr std::string_view Fields::*kStringMember[kFieldCount] = {
    &Fields::t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    &Fields::fl, &Fields::ak, &Fields::fk, &Fields::ac, &Fields::w, &Fields::str,
};

// Maps a key to its field number; kUnknownField for keys this version does
// not know. Runs for every key of every record, hence the character switch.
inline Field lookup_key(std::string_view key) {
  switch (key.size()) {
    case 1:
      switch (key[0]) {
        case 't': return kFieldT;
        case 's': return kFieldS;
        case 'e': return kFieldE;
        case 'a': return kFieldA;
        case 'n': return kFieldN;
        case 'g': return kFieldG;
        case 'w': return kFieldW;
        case 'd': return kFieldD;
      }
      return kUnknownField;
    case 2:
      switch (key[0] << 8 | key[1]) {
        case 't' << 8 | 'h': return kFieldTh;
        case 's' << 8 | 'k': return kFieldSk;
        case 'n' << 8 | 'm': return kFieldNm;
        case 'i' << 8 | 'd': return kFieldId;
        case 'f' << 8 | 'l': return kFieldFl;
        case 'a' << 8 | 'k': return kFieldAk;
        case 'f' << 8 | 'k': return kFieldFk;
        case 'a' << 8 | 'c': return kFieldAc;
        case 's' << 8 | 'y': return kFieldSy;
        case 'p' << 8 | 'g': return kFieldPg;
      }
      return kUnknownField;
    case 3:
      return key == "str" ? kFieldStr : kUnknownField;
    case 6:
      return key == "frames" ? kFieldFrames : kUnknownField;
  }
  return kUnknownField;
}

// The fast path's key lookup on the raw key text (after the opening quote):
// known keys are short and plain, so no more than the first bytes are
// looked at. A key with an escape, or longer than any known key, is
// unknown here, which declines the record for the precise path. Stage 1 has
// seen the key's closing quote, so no read passes it.
inline Field lookup_raw_key(const char* raw) {
  if (raw[0] == '"' || raw[0] == '\\') return kUnknownField;
  if (raw[1] == '"') return lookup_key(std::string_view(raw, 1));
  if (raw[1] == '\\') return kUnknownField;
  if (raw[2] == '"') return lookup_key(std::string_view(raw, 2));
  std::size_t length = 2;
  while (length <= kLongestKey && raw[length] != '"' && raw[length] != '\\') ++length;
  return raw[length] == '"' ? lookup_key(std::string_view(raw, length)) : kUnknownField;
}

// The length of a plain string value or key: the offset of its closing
// quote, with `text` just after the opening one; 0 with *escaped set when a
// backslash comes first (the precise path decodes escapes). Eight bytes at a
// time: stage 1 has seen the closing quote, and the reader's buffer has
// SIMDJSON_PADDING readable bytes after every line, so a word read past the
// quote stays inside the buffer.
inline std::size_t plain_string_length(const char* text, bool* escaped) {
  if constexpr (std::endian::native != std::endian::little) {
    std::size_t n = 0;
    while (text[n] != '"' && text[n] != '\\') ++n;
    *escaped = text[n] == '\\';
    return n;
  }
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHighs = 0x8080808080808080ull;
  // High bits set at the bytes of `word` equal to `c`; the lowest one marks
  // the first such byte exactly (bits above it may be spurious).
  auto bytes_equal = [](std::uint64_t word, char c) {
    const std::uint64_t x = word ^ (kOnes * static_cast<unsigned char>(c));
    return (x - kOnes) & ~x & kHighs;
  };
  for (std::size_t offset = 0;; offset += 8) {
    std::uint64_t word;
    std::memcpy(&word, text + offset, sizeof word);
    const std::uint64_t quotes = bytes_equal(word, '"');
    const std::uint64_t backslashes = bytes_equal(word, '\\');
    if ((quotes | backslashes) == 0) continue;
    // The first of the two decides: a quote before any backslash ends it.
    const int quote = quotes != 0 ? std::countr_zero(quotes) : 64;
    const int backslash = backslashes != 0 ? std::countr_zero(backslashes) : 64;
    *escaped = backslash < quote;
    return *escaped ? 0 : offset + static_cast<std::size_t>(quote) / 8;
  }
}

// True when `text` stops inside an object, array or string: the writer was
// cut off mid-record (a killed process, a full disk, a partial copy).
inline bool ends_inside_value(const char* text, std::size_t size) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < size; ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return in_string || depth > 0;
}

inline bool is_blank(const char* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i)
    if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r') return false;
  return true;
}

inline const char* type_word(Type type) {
  switch (type) {
    case Type::kUint: return "an unsigned integer";
    case Type::kString: return "a string";
    case Type::kBool: return "true or false";
    case Type::kArray: return "an array";
  }
  return "?";
}

// A field's key, by its bit.
inline const char* field_name(std::uint32_t bit) {
  switch (bit) {
    case kT: return "t";
    case kTh: return "th";
    case kSk: return "sk";
    case kS: return "s";
    case kE: return "e";
    case kA: return "a";
    case kN: return "n";
    case kNm: return "nm";
    case kG: return "g";
    case kId: return "id";
    case kFl: return "fl";
    case kAk: return "ak";
    case kFk: return "fk";
    case kAc: return "ac";
    case kW: return "w";
    case kStr: return "str";
    case kD: return "d";
    case kFrames: return "frames";
    case kSy: return "sy";
    case kPg: return "pg";
  }
  return "?";
}

}  // namespace xsc::trace_fields

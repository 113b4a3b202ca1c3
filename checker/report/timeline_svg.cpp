// A finding's picture as SVG: the lanes on the left, items in their slots,
// arrows between them, and the legend below.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "checker/report/timeline_picture.h"

namespace xsc::timeline {
namespace {

constexpr int kLabelW = 250;
constexpr int kLaneH = 40;
constexpr int kTopY = 78;

const char* const kBlockFill[] = {"#4e79a7", "#59a14f"};
const char* const kOtherFill = "#c9c4bf";
const char* const kHazard = "#d62728";
const char* const kLate = "#e8871e";
const char* const kEdge = "#4d4d4d";

std::string xml(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

}  // namespace

// Fits `text` in about `chars` characters, keeping its start.
std::string fit(const std::string& text, std::size_t chars) {
  if (text.size() <= chars) return text;
  if (chars <= 3) return text.substr(0, chars);
  // Do not cut a UTF-8 sequence in two.
  std::size_t n = chars - 3;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n) + "...";
}

namespace {

struct Box {
  double x, y, w, h;
};

// `slot_w`: the drawn width of a slot; wide pictures get narrower slots
// (markers keep their size).
Box item_box(const PItem& item, double slot_w) {
  const double scale = slot_w / kSlotW;
  double lane_y = kTopY + static_cast<double>(item.lane) * kLaneH;
  double x = kLabelW + static_cast<double>(item.slot) * slot_w;
  if (item.shape == Shape::kMarker) return Box{x + item.dx * scale, lane_y + 10, item.w, kMarkW};
  return Box{x + item.dx * scale, lane_y + 6, item.w * scale, kLaneH - 12.0};
}

void svg_marker(std::ostream& out, const PItem& item, const Box& b) {
  double cx = b.x + b.w / 2, cy = b.y + b.h / 2;
  std::string fill = item.block >= 0 ? kBlockFill[item.block] : "#ffffff";
  std::string stroke = item.late ? kLate : kEdge;
  char buf[512];
  switch (item.mark) {
    case Mark::kAlloc:
      std::snprintf(buf, sizeof buf, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"%s\"/>",
                    cx, b.y, b.x + b.w, b.y + b.h, b.x, b.y + b.h, fill.c_str(), kEdge);
      break;
    case Mark::kRealloc:
      std::snprintf(buf, sizeof buf,
                    "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"%s\"/>", cx,
                    b.y - 1, b.x + b.w + 1, cy, cx, b.y + b.h + 1, b.x - 1, cy, fill.c_str(), kEdge);
      break;
    case Mark::kFree:
      std::snprintf(buf, sizeof buf,
                    "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"3\"/>", b.x,
                    b.y, b.x + b.w, b.y + b.h, b.x + b.w, b.y, b.x, b.y + b.h, item.hazard ? kHazard : kEdge);
      break;
    case Mark::kRecord:
      std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5.5\" fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"2\"/>",
                    cx, cy, kEdge);
      break;
    case Mark::kWait:
      std::snprintf(buf, sizeof buf,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"/>",
                    b.x + 1, b.y + 1, b.w - 2, b.h - 2, item.late ? kLate : kEdge, stroke.c_str());
      break;
    case Mark::kSync:
      std::snprintf(buf, sizeof buf, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"3\"/>",
                    cx, b.y - 2, cx, b.y + b.h + 2, b.x, b.y + b.h + 2, b.x + b.w, b.y + b.h + 2, kEdge);
      break;
    case Mark::kFreeDone:
    case Mark::kNone:
      std::snprintf(buf, sizeof buf, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#ffffff\" stroke=\"%s\"/>",
                    b.x, b.y, b.x + b.w, b.y, cx, b.y + b.h, kEdge);
      break;
  }
  out << buf;
}

}  // namespace

std::string render_svg(const Picture& pic) {
  const std::size_t slots = std::max<std::size_t>(pic.slot_cols.size(), 1);
  const int lanes_h = static_cast<int>(pic.lanes.size()) * kLaneH + 12;
  // Past 100 slots, narrower ones keep a bounded picture within what
  // image converters take (rsvg-convert stops at 32767 pixels).
  const double slot_w = slots > 100 ? 60.0 : kSlotW;
  // Wide enough for the lanes and for the subtitle's line.
  const int width = std::max({kLabelW + static_cast<int>(static_cast<double>(slots) * slot_w) + 20, 980,
                              20 + static_cast<int>(static_cast<double>(pic.subtitle.size()) * 6.8)});
  const int legend_y = kTopY + lanes_h + 16;
  const int height = legend_y + 128;
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n";
  out << "<title>" << xml(pic.title) << "</title>\n";
  out << "<defs>\n";
  auto arrow_def = [&](const char* id, const char* colour) {
    out << "<marker id=\"" << id << "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
        << "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\" fill=\"" << colour
        << "\"/></marker>\n";
  };
  arrow_def("arrow-hb", kEdge);
  arrow_def("arrow-hazard", kHazard);
  arrow_def("arrow-late", kLate);
  out << "</defs>\n";
  out << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"#ffffff\"/>\n";
  out << "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << xml(pic.title) << "</text>\n";
  out << "<text x=\"10\" y=\"42\" font-size=\"12\">" << xml(pic.subtitle) << "</text>\n";
  if (!pic.note.empty())
    out << "<text x=\"10\" y=\"58\" font-size=\"11\" fill=\"#666666\">" << xml(pic.note) << "</text>\n";

  // Lanes, their labels, the logical time of each slot.
  for (std::size_t i = 0; i < pic.lanes.size(); ++i) {
    const PLane& lane = pic.lanes[i];
    int y = kTopY + static_cast<int>(i) * kLaneH;
    const char* bg = lane.block ? (i % 2 ? "#f4f1ea" : "#ece8df") : (i % 2 ? "#f5f6f8" : "#eceef2");
    out << "<rect x=\"0\" y=\"" << y << "\" width=\"" << width << "\" height=\"" << kLaneH << "\" fill=\"" << bg
        << "\"/>\n";
    out << "<text x=\"10\" y=\"" << y + (lane.detail.empty() ? 23 : 16) << "\" font-size=\"12\""
        << (lane.host ? " font-style=\"italic\"" : "") << ">" << xml(lane.label) << "</text>\n";
    if (!lane.detail.empty())
      out << "<text x=\"10\" y=\"" << y + 30 << "\" font-size=\"10\" fill=\"#555555\">" << xml(lane.detail)
          << "</text>\n";
  }
  int sep_y = kTopY + static_cast<int>(pic.first_block_lane) * kLaneH;
  out << "<line x1=\"0\" y1=\"" << sep_y << "\" x2=\"" << width << "\" y2=\"" << sep_y
      << "\" stroke=\"#888888\" stroke-width=\"1.5\"/>\n";
  out << "<text x=\"" << kLabelW - 8 << "\" y=\"" << kTopY - 8
      << "\" font-size=\"10\" fill=\"#666666\" text-anchor=\"end\">logical time &#8594;</text>\n";
  for (std::size_t s = 0; s < pic.slot_cols.size(); ++s) {
    double x = kLabelW + static_cast<double>(s) * slot_w;
    out << "<line x1=\"" << x << "\" y1=\"" << kTopY << "\" x2=\"" << x << "\" y2=\"" << kTopY + lanes_h - 12
        << "\" stroke=\"#d0d0d0\" stroke-dasharray=\"2,3\"/>\n";
    out << "<text x=\"" << x + slot_w / 2 << "\" y=\"" << kTopY - 8
        << "\" font-size=\"9\" fill=\"#999999\" text-anchor=\"middle\">t" << pic.slot_cols[s] << "</text>\n";
  }

  // Items.
  for (const PItem& item : pic.items) {
    Box b = item_box(item, slot_w);
    out << "<g>";
    out << "<title>" << xml(item.detail.empty() ? item.label : item.detail) << "</title>";
    if (item.shape == Shape::kMarker) {
      svg_marker(out, item, b);
      if (item.labelled)
        out << "<text x=\"" << b.x - 2 << "\" y=\"" << b.y + b.h + 11 << "\" font-size=\"9\" fill=\""
          << (item.late ? kLate : "#333333") << "\"" << (item.late ? " font-weight=\"bold\"" : "") << ">"
          << xml(fit(item.label, item.late ? 22 : item.label_chars)) << "</text>";
    } else {
      const char* fill = item.shape == Shape::kElision ? "#ffffff"
                         : item.block >= 0             ? kBlockFill[item.block]
                                                       : kOtherFill;
      const char* stroke = item.late ? kLate : item.hazard ? kHazard : "#7a7a7a";
      out << "<rect x=\"" << b.x << "\" y=\"" << b.y << "\" width=\"" << b.w << "\" height=\"" << b.h
          << "\" rx=\"3\" fill=\"" << fill << "\" stroke=\"" << stroke << "\" stroke-width=\""
          << (item.hazard || item.late ? 2.5 : 1) << "\""
          << (item.shape == Shape::kElision ? " stroke-dasharray=\"3,2\"" : "") << "/>";
      const bool dark = item.block >= 0 && item.shape == Shape::kSlice;
      const std::size_t chars = static_cast<std::size_t>(std::max(0.0, (b.w - 6) / 6.2));
      std::string label = fit(item.label, chars);
      // An elision keeps its count when its slot is narrow.
      if (item.shape == Shape::kElision && label.size() < item.label.size())
        label = fit(item.label.substr(3, item.label.find(' ') - 3) + " ops", chars);
      out << "<text x=\"" << b.x + 4 << "\" y=\"" << b.y + b.h / 2 + 4 << "\" font-size=\"10\" fill=\""
          << (dark ? "#ffffff" : "#222222") << "\">" << xml(label) << "</text>";
    }
    out << "</g>\n";
  }

  // Flows, drawn over the items.
  for (const PFlow& flow : pic.flows) {
    const PItem& from = pic.items[flow.from];
    const PItem& to = pic.items[flow.to];
    Box a = item_box(from, slot_w), b = item_box(to, slot_w);
    double x1, y1, x2, y2;
    if (b.x > a.x + a.w) {
      x1 = a.x + a.w;
      y1 = a.y + a.h / 2;
      x2 = b.x;
      y2 = b.y + b.h / 2;
    } else {
      // Same column (or leftwards): leave from the bottom or top edge.
      // A straight line over a marker's centre, else over the middle of
      // the narrower slice.
      bool down = b.y > a.y;
      double x = to.shape == Shape::kMarker     ? b.x + b.w / 2
                 : from.shape == Shape::kMarker ? a.x + a.w / 2
                 : a.w < b.w                    ? a.x + a.w / 2
                                                : b.x + b.w / 2;
      x1 = x2 = x;
      y1 = down ? a.y + a.h : a.y;
      // Up into a marker: end under its label, which stays readable.
      y2 = down ? b.y : b.y + b.h + (to.shape == Shape::kMarker && to.labelled ? 13 : 0);
    }
    const char* colour = flow.kind == FlowKind::kHb ? kEdge : flow.kind == FlowKind::kLateWait ? kLate : kHazard;
    const char* head = flow.kind == FlowKind::kHb ? "arrow-hb" : flow.kind == FlowKind::kLateWait ? "arrow-late" : "arrow-hazard";
    char path[256];
    double mx = (x1 + x2) / 2, my = (y1 + y2) / 2;
    if (b.x > a.x + a.w)
      std::snprintf(path, sizeof path, "M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f", x1, y1, mx, y1, mx, y2, x2, y2);
    else
      std::snprintf(path, sizeof path, "M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f", x1, y1, x1, my, x2, my, x2, y2);
    out << "<g class=\"flow-" << flow_category(flow.kind) << "\"><title>"
        << xml(flow.detail.empty() ? flow_name(flow.kind) : flow.detail) << "</title><path d=\"" << path
        << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"" << (flow.kind == FlowKind::kHb ? 1.5 : 2.5)
        << "\"" << (flow.kind == FlowKind::kHazard || flow.kind == FlowKind::kRace ? " stroke-dasharray=\"6,4\"" : "")
        << " marker-end=\"url(#" << head << ")\"/>";
    // A vertical arrow is labelled on its right; a curve to the right on
    // the left of its middle, clear of the ops at its end.
    // Along one lane it is labelled under its middle.
    const bool vertical = x1 == x2, level = y1 == y2;
    if (!flow.label.empty())
      out << "<text x=\"" << (vertical ? mx + 5 : level ? mx : mx - 6) << "\" y=\""
          << (vertical ? (y2 < y1 ? y1 - 1 : y1 + 10) : level ? my + 17 : my + 4) << "\" font-size=\"10\" font-weight=\"bold\" text-anchor=\""
          << (vertical ? "start" : level ? "middle" : "end")
          << "\" fill=\"" << colour << "\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">" << xml(flow.label)
          << "</text>";
    out << "</g>\n";
  }

  // Legend.
  int y = legend_y;
  int x = 10;
  out << "<g font-size=\"11\">\n";
  for (std::size_t i = 0; i < pic.block_names.size() && i < 2; ++i) {
    out << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"22\" height=\"12\" rx=\"2\" fill=\""
        << kBlockFill[i] << "\"/><text x=\"" << x + 28 << "\" y=\"" << y << "\">ops on "
        << xml(pic.block_names[i]) << "</text>\n";
    x += 40 + static_cast<int>(pic.block_names[i].size() + 7) * 7;
  }
  out << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"22\" height=\"12\" rx=\"2\" fill=\"" << kOtherFill
      << "\"/><text x=\"" << x + 28 << "\" y=\"" << y << "\">other ops</text>\n";
  y += 22;
  x = 10;
  auto legend_mark = [&](Mark mark, int block, const char* text) {
    PItem item;
    item.shape = Shape::kMarker;
    item.mark = mark;
    item.block = block;
    svg_marker(out, item, Box{static_cast<double>(x), static_cast<double>(y - 10), 12, 12});
    out << "<text x=\"" << x + 18 << "\" y=\"" << y << "\">" << text << "</text>\n";
    x += 24 + static_cast<int>(std::string_view(text).size()) * 7;
  };
  legend_mark(Mark::kAlloc, 0, "allocation");
  legend_mark(Mark::kFree, -1, "free");
  legend_mark(Mark::kRealloc, 1, "reallocation");
  legend_mark(Mark::kRecord, -1, "event record");
  legend_mark(Mark::kWait, -1, "stream wait");
  legend_mark(Mark::kSync, -1, "host sync");
  y += 22;
  x = 10;
  auto legend_arrow = [&](const char* colour, const char* head, bool dashed, const char* text) {
    out << "<path d=\"M" << x << ' ' << y - 4 << "L" << x + 34 << ' ' << y - 4 << "\" stroke=\"" << colour
        << "\" stroke-width=\"2.5\"" << (dashed ? " stroke-dasharray=\"6,4\"" : "") << " marker-end=\"url(#" << head
        << ")\"/><text x=\"" << x + 42 << "\" y=\"" << y << "\">" << text << "</text>\n";
    x += 60 + static_cast<int>(std::string_view(text).size()) * 6;
  };
  legend_arrow(kEdge, "arrow-hb", false, "record -> wait (happens-before)");
  legend_arrow(kHazard, "arrow-hazard", true, "hazard: the missing edge");
  legend_arrow(kLate, "arrow-late", false, "late wait (after the free)");
  out << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"30\" height=\"12\" fill=\"#ffffff\" stroke=\"#7a7a7a\" "
      << "stroke-dasharray=\"3,2\"/><text x=\"" << x + 36 << "\" y=\"" << y << "\">...N ops...: not drawn</text>\n";
  y += 24;
  std::string_view clock = kClockText;
  std::size_t cut = clock.find("; ");
  out << "<text x=\"10\" y=\"" << y << "\" fill=\"#444444\">" << xml(clock.substr(0, cut + 1)) << "</text>\n";
  out << "<text x=\"10\" y=\"" << y + 15 << "\" fill=\"#444444\">" << xml(clock.substr(cut + 2)) << "</text>\n";
  out << "</g>\n</svg>\n";
  return out.str();
}

}  // namespace xsc::timeline

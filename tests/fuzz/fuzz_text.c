/* The text format: any input parses or fails with a message; a graph that parses prints,
 * and the printed text parses to a graph that prints the same text (round trip). */
#include <string.h>

#include "fuzz.h"
#include "ic/ic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  ic_graph *g = NULL;
  ic_status s = ic_graph_parse(text, &g);
  free(text);
  if (s != IC_OK) {
    FUZZ_REQUIRE(g == NULL, "a failed parse returned a graph");
    const char *msg = ic_last_error();
    FUZZ_REQUIRE(msg && msg[0], "a failed parse (%s) left no message", ic_status_string(s));
    return 0;
  }
  char *printed = NULL, *again = NULL;
  s = ic_graph_print(g, &printed);
  FUZZ_REQUIRE(s == IC_OK, "a parsed graph does not print: %s", ic_last_error());
  ic_graph *g2 = NULL;
  s = ic_graph_parse(printed, &g2);
  FUZZ_REQUIRE(s == IC_OK, "printed text does not parse: %s\n%s", ic_last_error(), printed);
  s = ic_graph_print(g2, &again);
  FUZZ_REQUIRE(s == IC_OK, "the reparsed graph does not print: %s", ic_last_error());
  FUZZ_REQUIRE(strcmp(printed, again) == 0, "print/parse does not round-trip:\n%s\n---\n%s", printed, again);
  ic_string_free(printed);
  ic_string_free(again);
  ic_graph_destroy(g);
  ic_graph_destroy(g2);
  return 0;
}

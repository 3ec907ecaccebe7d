#include "newscls/core/interrupt.h"

#include <csignal>

#include "newscls/core/error.h"

namespace newscls {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;  // the one global: a signal handler needs it

void on_signal(int) {
  if (g_interrupted < 100) g_interrupted = g_interrupted + 1;  // counted: a second one insists
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

int interrupt_count() { return g_interrupted; }

void check_interrupted() {
  if (interrupted()) throw InterruptedError();
}

}  // namespace newscls

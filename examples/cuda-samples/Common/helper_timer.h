// A host stopwatch for the samples' timings (in the style of the CUDA samples'
// helper_timer.h), on std::chrono instead of per-platform timers.
#ifndef COMMON_HELPER_TIMER_H_
#define COMMON_HELPER_TIMER_H_

#include <chrono>

class StopWatchInterface {
 public:
  StopWatchInterface() {}
  virtual ~StopWatchInterface() {}

  virtual void start() = 0;
  virtual void stop() = 0;
  virtual void reset() = 0;
  virtual float getTime() = 0;
};

class StopWatchChrono : public StopWatchInterface {
 public:
  StopWatchChrono() : running(false), diff_time(0.0f), total_time(0.0f) {}
  ~StopWatchChrono() override {}

  void start() override {
    start_time = std::chrono::steady_clock::now();
    running = true;
  }
  void stop() override {
    diff_time = elapsed();
    total_time += diff_time;
    running = false;
  }
  void reset() override {
    diff_time = 0;
    total_time = 0;
    if (running) start_time = std::chrono::steady_clock::now();
  }
  float getTime() override { return running ? total_time + elapsed() : total_time; }

 private:
  float elapsed() const {
    return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() -
                                                    start_time).count();
  }
  std::chrono::steady_clock::time_point start_time;
  bool running;
  float diff_time;
  float total_time;
};

inline bool sdkCreateTimer(StopWatchInterface **timer_interface) {
  *timer_interface = reinterpret_cast<StopWatchInterface *>(new StopWatchChrono());
  return (*timer_interface != NULL) ? true : false;
}

inline bool sdkDeleteTimer(StopWatchInterface **timer_interface) {
  if (*timer_interface) {
    delete *timer_interface;
    *timer_interface = NULL;
  }
  return true;
}

inline bool sdkStartTimer(StopWatchInterface **timer_interface) {
  if (*timer_interface) (*timer_interface)->start();
  return true;
}

inline bool sdkStopTimer(StopWatchInterface **timer_interface) {
  if (*timer_interface) (*timer_interface)->stop();
  return true;
}

inline bool sdkResetTimer(StopWatchInterface **timer_interface) {
  if (*timer_interface) (*timer_interface)->reset();
  return true;
}

inline float sdkGetTimerValue(StopWatchInterface **timer_interface) {
  if (*timer_interface) {
    return (*timer_interface)->getTime();
  } else {
    return 0.0f;
  }
}

#endif  // COMMON_HELPER_TIMER_H_

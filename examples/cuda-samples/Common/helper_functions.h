// The host helpers most samples include (in the style of the CUDA samples'
// helper_functions.h): strings, timers and the standard headers they assume.
#ifndef COMMON_HELPER_FUNCTIONS_H_
#define COMMON_HELPER_FUNCTIONS_H_

#include <assert.h>
#include <math.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <helper_string.h>
#include <helper_timer.h>

#endif  // COMMON_HELPER_FUNCTIONS_H_

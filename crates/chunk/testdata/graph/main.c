#include <stdio.h>
#include "util.h"

int main(void) {
    return parse(1);
}

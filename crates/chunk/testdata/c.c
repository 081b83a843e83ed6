#include <stdio.h>

/* A point in the plane. */
struct point {
    int x;
    int y;
};

typedef struct {
    int fd;
} conn_t;

typedef int (*handler_t)(int);

static int *alloc_ints(size_t n);

/* Allocates n ints. */
static int *alloc_ints(size_t n) {
    return calloc(n, sizeof(int));
}

int main(void) {
    return 0;
}

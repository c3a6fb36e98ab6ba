#include <stdio.h>

int main(void) {
    printf("redis-server\n");
    return 0;
}

// libnghttp2 (Debian's libnghttp2-dev): the HTTP/2 framing engine under Livecast's APNs transport.
#include <nghttp2/nghttp2.h>

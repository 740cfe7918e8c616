/** Small plain-text answers the gateway makes itself (errors, direct responses). */
export function textResponse(status: number, body: string, serverHeader: string): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", server: serverHeader },
  });
}

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request\n",
  404: "Not Found\n",
  500: "Internal Server Error\n",
  502: "Bad Gateway\n",
  503: "Service Unavailable\n",
  504: "Gateway Timeout\n",
};

export function errorResponse(status: number, serverHeader: string): Response {
  return textResponse(status, STATUS_TEXT[status] ?? "\n", serverHeader);
}

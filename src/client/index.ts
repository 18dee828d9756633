export { ApiError, type ServiceClient, type Download, type WriteOptions } from './service-client';
export { InProcessClient, LOCAL_ACCOUNT_EMAIL } from './in-process';
export { HttpClient, type HttpClientOptions } from './http';
